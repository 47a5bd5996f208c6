// pcie-link: every GPU, NIC and switch uplink on their paths trained to the speed/width it can (or the baseline says).
import type { Bdf, Inventory, PciDevice } from '../model/inventory.js';
import { deviceName, linkText } from '../model/names.js';
import { defineCheck, finder } from './types.js';

const f = finder('pcie-link');

/** Devices at the lower end of a physical link: GPUs, NICs and switch upstream ports (not switch-internal downstream ports). */
function linkEnds(inv: Inventory): { dev: PciDevice; parent: PciDevice | undefined }[] {
  const ends = new Set<Bdf>();
  for (const g of inv.gpus) ends.add(g.bdf);
  for (const n of inv.nics) if (n.bdf) ends.add(n.bdf);
  for (const b of [...ends]) {
    const chain = inv.pci.get(b)?.bridges ?? [];
    chain.forEach((br, i) => {
      const c = inv.pci.get(br)?.config;
      const t = c?.known && c.value.pcie ? c.value.pcie.portType : null;
      if (t === 5 || (t === null && i % 2 === 1)) ends.add(br);
    });
  }
  return [...ends]
    .map((b) => inv.pci.get(b))
    .filter((d): d is PciDevice => d !== undefined)
    .map((dev) => ({ dev, parent: inv.pci.get(dev.bridges[dev.bridges.length - 1] ?? '') }));
}

const min = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a == null ? (b ?? null) : b == null ? a : Math.min(a, b);

export default defineCheck({
  id: 'pcie-link',
  title: 'PCIe link speed and width',
  run({ inv, baseline }) {
    const isGpu = new Set(inv.gpus.map((g) => g.bdf));
    const isNic = new Map(inv.nics.map((n) => [n.bdf, n.name]));
    const out = [];
    const ends = linkEnds(inv);
    if (ends.length === 0) return [f('link-na', 'skip', 'node', 'not applicable: no GPU or RDMA adapter on the PCI bus')];
    for (const { dev, parent } of ends) {
      const what = isGpu.has(dev.bdf) ? `GPU ${deviceName(dev.vendor, dev.device)}` : isNic.has(dev.bdf) ? `NIC ${isNic.get(dev.bdf)}` : 'switch uplink';
      const cur = dev.current;
      if (!cur || cur.speed === null || cur.width === null) {
        out.push(f('link-unknown', 'skip', dev.bdf, `${what}: link speed/width not readable`));
        continue;
      }
      const base = baseline?.devices.find((d) => d.bdf === dev.bdf)?.link;
      // The link's capability is the lower of both ends' maxima (a Gen4 NIC in a Gen5 port trains to Gen4).
      const wantSpeed = base ? base.speed : min(dev.max?.speed, parent?.max?.speed);
      const wantWidth = base ? base.width : min(dev.max?.width, parent?.max?.width);
      const want = linkText(wantSpeed, wantWidth);
      const got = linkText(cur.speed, cur.width);
      if (wantWidth !== null && cur.width < wantWidth) {
        out.push(f('link-width-low', 'fail', dev.bdf, `${what} trained x${cur.width} of x${wantWidth}`, want, got));
      } else if (wantSpeed !== null && cur.speed < wantSpeed) {
        const idle = isGpu.has(dev.bdf) && !baseline?.gpuSpeedStrict;
        out.push(f(idle ? 'link-speed-idle' : 'link-speed-low', idle ? 'warn' : 'fail', dev.bdf, `${what} at ${got} of ${want}`, want, got));
      } else {
        out.push(f('link-ok', 'pass', dev.bdf, `${what} ${got} of ${want}`, want, got));
      }
    }
    return out;
  },
});
