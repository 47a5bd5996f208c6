// The drill's ReBAR fault, `gpu-rebar:<gpu bdf>=max256M`: the GPU's resizable BARs offer no size above the cap (as a
// firmware with Resizable BAR off or capped shows them), and a BAR larger than the cap now is cut to it in `resource`.
import { parseResource, shrinkResource } from '../../parsers/pci-resource.js';
import { sizeUnit } from '../gpu-bar1.js';
import { base, devOf, text } from '../stage.js';
import type { FaultSpec } from '../types.js';
import { formatResizeMask, parseResizeMask, RESIZE_RE, sizeBytes } from './parse.js';

export type RebarFault = { readonly kind: 'gpu-rebar'; readonly bdf: string; readonly maxMiBLog2: number };

export const rebarFault: FaultSpec<RebarFault> = {
  syntax: 'gpu-rebar:<gpu bdf>=max256M',
  subject: 'a GPU PCI address (0000:18:00.0)',
  parse(bdf, value) {
    const m = /^max([1-9]\d{0,6})([MGT])$/.exec(value);
    const mib = m ? Number(m[1]) * { M: 1, G: 1024, T: 1024 * 1024 }[m[2] as 'M' | 'G' | 'T'] : 0;
    const n = Math.log2(mib);
    if (!Number.isInteger(n)) return { ok: false, error: 'value must be max and a power-of-two size from 1M (max256M, max16G)' };
    return { ok: true, value: { kind: 'gpu-rebar', bdf, maxMiBLog2: n } };
  },
  format: (f) => `gpu-rebar:${f.bdf}=max${sizeUnit(Number(sizeBytes(f.maxMiBLog2)))}`,
  stage: {
    rewrite(f, p, b) {
      if (devOf(p) !== f.bdf) return b;
      const m = RESIZE_RE.exec(base(p));
      if (m) {
        const sizes = parseResizeMask(text(b));
        return sizes.ok ? Buffer.from(formatResizeMask(sizes.value.filter((n) => n <= f.maxMiBLog2))) : b;
      }
      if (base(p) !== 'resource') return b;
      // Every resizable BAR of the GPU: which they are is not known here, so every BAR above the cap is cut.
      const rs = parseResource(text(b));
      if (!rs.ok) return b;
      const cap = sizeBytes(f.maxMiBLog2);
      return Buffer.from(rs.value.filter((r) => r.flags !== 0 && r.end - r.start + 1n > cap).reduce((t, r) => shrinkResource(t, r.index, cap), text(b)));
    },
  },
};
