// gpu-bar1: the aperture GPUDirect RDMA maps GPU memory through (NVIDIA's GPUDirect RDMA guide, "PCI BAR sizes") is
// as large as on the reference node and lies inside its upstream bridge's window.
import { factText } from '../model/fact.js';
import { bar1Window, insideWindow, sizeText, unassignedBars } from '../parsers/pci-resource.js';
import type { Finding } from '../model/finding.js';
import { defineCheck, finder } from './types.js';
import WORDING from './gpu-bar1.json' with { type: 'json' };

const f = finder('gpu-bar1', WORDING.codes);

/** The 32-bit-era default BAR1 (256 MiB): no NVIDIA GPU ships a smaller one, so less is a lost window, not a model. */
const FLOOR = 256n << 20n;

export default defineCheck('gpu-bar1', WORDING, {
  run({ inv, baseline }): Finding[] {
    if (inv.gpus.length === 0) return [f('bar1-na', 'skip', 'node', 'not applicable: no NVIDIA GPU')];
    return inv.gpus.map((g) => {
      const want = baseline?.devices.find((d) => d.bdf === g.bdf && d.role === 'gpu')?.bar1;
      const expected = want === undefined ? 'a 64-bit prefetchable BAR' : `>= ${sizeText(BigInt(want))}`;
      if (g.resource.state !== 'present') return f('bar1-unreadable', 'skip', g.bdf, `resource ${factText(g.resource)}`);
      const w = bar1Window(g.resource.value);
      if (!w) {
        // The kernel keeps a BAR it could not place with IORESOURCE_UNSET: named, so dmesg's "BAR n … failed to assign" is found.
        const u = unassignedBars(g.resource.value)[0];
        const why = u ? `resource line ${u.index} (${sizeText(u.size)}, 64-bit prefetchable) has no address (IORESOURCE_UNSET): the BIOS or kernel could not assign it` : 'no assigned 64-bit prefetchable BAR in resource';
        return f('bar1-none', 'fail', g.bdf, why, expected, 'none');
      }
      const at = `resource line ${w.index}, 0x${w.start.toString(16)}-0x${w.end.toString(16)}`;
      const actual = sizeText(w.size);
      if (want !== undefined && w.size < BigInt(want)) return f('bar1-small', 'fail', g.bdf, `GPUDirect window ${actual} (${at}), reference ${sizeText(BigInt(want))}`, expected, actual);
      if (want === undefined && w.size < FLOOR) return f('bar1-small', 'warn', g.bdf, `largest 64-bit prefetchable BAR is ${actual} (${at}), below every GPU's BAR1`, `>= ${sizeText(FLOOR)}`, actual);
      if (g.upstream.state === 'present' && !insideWindow(w, g.upstream.value))
        return f('bar1-outside', 'fail', g.bdf, `GPUDirect window ${at} lies outside every memory window of the upstream bridge`, 'inside the bridge window', 'outside');
      // On a root bus (a VM's passthrough GPU) there is no bridge window to hold it in; unread, it is said so.
      const bridge = g.upstream.state === 'present' ? 'inside the bridge window' : g.upstream.state === 'absent' ? 'on a root bus' : `bridge window ${factText(g.upstream)}`;
      return f('bar1-ok', 'pass', g.bdf, `GPUDirect window ${actual} (${at}), ${bridge}`, expected, actual);
    });
  },
});
