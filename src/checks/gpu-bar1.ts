// gpu-bar1: the aperture GPUDirect RDMA maps GPU memory through (NVIDIA's GPUDirect RDMA guide, "PCI BAR sizes") is
// as large as on the reference node and lies inside its upstream bridge's window.
import { factText } from '../model/fact.js';
import { bar1Window, insideWindow, sizeText } from '../parsers/pci-resource.js';
import { type Check, type Codes, defineCheck, finder } from './types.js';

const CODES = {
  'bar1-ok': { tells: 'The GPU exposes its GPUDirect window (the largest 64-bit prefetchable BAR) at the reference size, inside its bridge window.', do: 'None.', layer: 'server' },
  'bar1-small': { tells: 'The GPUDirect window is smaller than on the reference node: the BIOS lost Resizable BAR or "Above 4G decoding", so RDMA can map only part of GPU memory (nvidia_p2p_get_pages fails beyond it).', do: 'Enable Above 4G decoding and Resizable BAR (or the vendor\'s large-BAR option) in the BIOS; compare `nvidia-smi -q` "BAR1 Memory Usage" with the reference node.', layer: 'server' },
  'bar1-none': { tells: 'The GPU has no assigned 64-bit prefetchable BAR: there is no window for GPUDirect RDMA at all (the BIOS or kernel could not place it).', do: 'Look in dmesg for "BAR … no space" or "failed to assign"; enable Above 4G decoding in the BIOS, or boot with pci=realloc.', layer: 'server' },
  'bar1-outside': { tells: 'The GPU\'s window is not inside its upstream bridge\'s memory windows: the kernel\'s resource tree and the hardware disagree, and peer writes through the bridge will not be routed.', do: 'Look in dmesg for resource conflicts on the bridge; reboot with the BIOS defaults, then pci=realloc.', layer: 'server' },
  'bar1-unreadable': { tells: 'The GPU\'s `resource` file could not be read or parsed (a capture without it, or a kernel that writes another format).', do: 'Capture again with gdrgate snapshot on the node; the message names the file.', layer: 'scheduler' },
  'bar1-na': { tells: 'No NVIDIA GPU on this node.', do: 'None.', layer: 'server' },
} as const satisfies Codes;

const f = finder('gpu-bar1', CODES);

/** The 32-bit-era default BAR1 (256 MiB): no NVIDIA GPU ships a smaller one, so less is a lost window, not a model. */
const FLOOR = 256n << 20n;

const check: Check<'gpu-bar1', typeof CODES> = defineCheck({
  id: 'gpu-bar1',
  title: "The GPU's BAR1 window (GPUDirect RDMA aperture)",
  reasonLabel: 'gpu-bar1',
  codes: CODES,
  docs: 'docs/checks/gpu-bar1.md',
  run({ inv, baseline }) {
    if (inv.gpus.length === 0) return [f('bar1-na', 'skip', 'node', 'not applicable: no NVIDIA GPU')];
    return inv.gpus.map((g) => {
      const want = baseline?.devices.find((d) => d.bdf === g.bdf && d.role === 'gpu')?.bar1;
      const expected = want === undefined ? 'a 64-bit prefetchable BAR' : `>= ${sizeText(BigInt(want))}`;
      if (g.resource.state !== 'present') return f('bar1-unreadable', 'skip', g.bdf, `resource ${factText(g.resource)}`);
      const w = bar1Window(g.resource.value);
      if (!w) return f('bar1-none', 'fail', g.bdf, 'no assigned 64-bit prefetchable BAR in resource', expected, 'none');
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

export default check;
