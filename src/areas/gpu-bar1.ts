// The GPUDirect window (gpu-bar1): the GPU's largest 64-bit prefetchable BAR in sysfs `resource`, read by the shared
// inventory pass. A drill cuts the window to a size.
import { bar1 } from '../compare/bar1.js';
import { valueOf } from '../model/fact.js';
import { parseSize } from '../parsers/limits.js';
import { bar1Window, parseResource, shrinkResource } from '../parsers/pci-resource.js';
import { base, devOf, text } from './stage.js';
import { defineArea } from './types.js';

export type Bar1Fault = { readonly kind: 'gpu-bar1'; readonly bdf: string; readonly bytes: number };

/** 256M, 16G, or bytes: the largest unit parseSize reads back exactly. */
export function sizeUnit(bytes: number): string {
  for (const [u, n] of [['G', 2 ** 30], ['M', 2 ** 20], ['K', 2 ** 10]] as const) if (bytes % n === 0) return `${bytes / n}${u}`;
  return String(bytes);
}

export default defineArea<'gpu-bar1', Bar1Fault>({
  id: 'gpu-bar1',
  title: "each GPU's GPUDirect window (BAR1) in sysfs resource",
  compare: bar1,
  captureDevice(inv, d, role) {
    const rs = role === 'gpu' ? valueOf(inv.gpus.find((g) => g.bdf === d.bdf)?.resource ?? { state: 'absent' }) : undefined;
    const w = rs && bar1Window(rs);
    return w ? { bar1: Number(w.size) } : {};
  },
  fault: {
    syntax: 'gpu-bar1:<gpu bdf>=256M',
    subject: 'a GPU PCI address (0000:18:00.0)',
    parse(bdf, value) {
      const s = parseSize(value);
      if (!s.ok || s.value === 'unlimited' || s.value <= 0) return { ok: false, error: 'value must be a window size (256M, 16G)' };
      return { ok: true, value: { kind: 'gpu-bar1', bdf, bytes: s.value } };
    },
    format: (f) => `gpu-bar1:${f.bdf}=${sizeUnit(f.bytes)}`,
    stage: {
      rewrite(f, p, b) {
        if (devOf(p) !== f.bdf || base(p) !== 'resource') return b;
        // The GPUDirect window (drivers/pci/pci-sysfs.c resource_show) ends `bytes` after its start, as a BIOS gives it.
        const rs = parseResource(text(b));
        const w = rs.ok ? bar1Window(rs.value) : null;
        return w ? Buffer.from(shrinkResource(text(b), w.index, BigInt(f.bytes))) : b;
      },
    },
  },
});
