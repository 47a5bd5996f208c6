// pcie-link: every GPU, NIC and switch uplink on their paths trained to the speed/width it can (or the baseline says).
import { type Fact, present, unknown, whyUnknown, nul, valueOf } from '../model/fact.js';
import type { Bdf, Inventory, PciDevice } from '../model/inventory.js';
import { deviceName, linkText } from '../model/names.js';
import { linkless } from '../model/pci.js';
import { portType } from '../topo/classify.js';
import type { Finding } from '../model/finding.js';
import { defineCheck, finder } from './types.js';
import WORDING from './pcie-link.json' with { type: 'json' };

const f = finder('pcie-link', WORDING.codes);

/** Devices at the lower end of a physical link: GPUs, NICs and switch upstream ports (not switch-internal downstream ports). */
function linkEnds(inv: Inventory): { dev: PciDevice; parent: PciDevice | undefined }[] {
  const ends = new Set<Bdf>();
  for (const g of inv.gpus) ends.add(g.bdf);
  for (const n of inv.nics) if (n.bdf.state === 'present') ends.add(n.bdf.value);
  for (const b of [...ends]) {
    const chain = inv.pci.get(b)?.bridges ?? [];
    chain.forEach((br, i) => {
      const t = portType(inv, br);
      if (t === 5 || (t === null && i % 2 === 1)) ends.add(br);
    });
  }
  return [...ends]
    .map((b) => inv.pci.get(b))
    .filter((d): d is PciDevice => d !== undefined)
    .map((dev) => ({ dev, parent: inv.pci.get(dev.bridges[dev.bridges.length - 1] ?? '') }));
}

/**
 * What the link can do: the lower of both ends' maxima (a Gen4 NIC in a Gen5 port trains to Gen4). With a parent
 * port whose maximum is not known, the device's own maximum is no bound on the link: unknown, never a guess.
 */
function capability(mine: Fact<number>, parent: Fact<number> | undefined, what: string): Fact<number> {
  if (mine.state !== 'present') return unknown(mine.state === 'unknown' ? mine.why : `no maximum ${what} for the device`);
  if (parent === undefined) return mine;
  if (parent.state !== 'present') return unknown(parent.state === 'unknown' ? parent.why : `no maximum ${what} for the port above`);
  return present(Math.min(mine.value, parent.value));
}

const fromBaseline = (v: number | null, what: string): Fact<number> => (v === null ? unknown(`the baseline records no link ${what}`) : present(v));

export default defineCheck('pcie-link', WORDING, {
  run({ inv, baseline }): Finding[] {
    const isGpu = new Set(inv.gpus.map((g) => g.bdf));
    const isNic = new Map(inv.nics.map((n) => [valueOf(n.bdf), n.name]));
    const out = [];
    const ends = linkEnds(inv);
    if (ends.length === 0) return [f('link-na', 'skip', 'node', 'not applicable: no GPU or RDMA adapter on the PCI bus')];
    for (const { dev, parent } of ends) {
      const what = isGpu.has(dev.bdf) ? `GPU ${deviceName(nul(dev.vendor), nul(dev.device))}` : isNic.has(dev.bdf) ? `NIC ${isNic.get(dev.bdf)}` : 'switch uplink';
      // An RC integrated endpoint or event collector has no link: its Link registers are reserved, nothing to judge.
      const type = portType(inv, dev.bdf);
      if (type !== null && linkless(type)) {
        out.push(f('link-na', 'skip', dev.bdf, `${what}: a Root Complex ${type === 9 ? 'Integrated Endpoint' : 'Event Collector'} (PCIe Device/Port Type ${type}) has no link to check`));
        continue;
      }
      const { speed, width } = dev.current;
      if (speed.state !== 'present' || width.state !== 'present') {
        const why = whyUnknown(speed, width) ?? 'no current_link_* and no Link Status';
        out.push(f('link-unknown', 'skip', dev.bdf, `${what}: link speed/width not readable (${why})`));
        continue;
      }
      const base = baseline?.devices.find((d) => d.bdf === dev.bdf)?.link;
      const wantSpeed = base ? fromBaseline(base.speed, 'speed') : capability(dev.max.speed, parent?.max.speed, 'speed');
      const wantWidth = base ? fromBaseline(base.width, 'width') : capability(dev.max.width, parent?.max.width, 'width');
      const want = linkText(wantSpeed, wantWidth);
      const got = linkText(speed, width);
      if (wantWidth.state === 'present' && width.value < wantWidth.value) {
        out.push(f('link-width-low', 'fail', dev.bdf, `${what} trained x${width.value} of x${wantWidth.value}`, want, got));
      } else if (wantSpeed.state === 'present' && speed.value < wantSpeed.value) {
        const idle = isGpu.has(dev.bdf) && !baseline?.gpuSpeedStrict;
        out.push(f(idle ? 'link-speed-idle' : 'link-speed-low', idle ? 'warn' : 'fail', dev.bdf, `${what} at ${got} of ${want}`, want, got));
      } else if (wantSpeed.state !== 'present' || wantWidth.state !== 'present') {
        // Without the maximum (nor a baseline) a link at Gen3 x4 may be one that trained down: could not tell.
        const why = whyUnknown(wantSpeed, wantWidth) ?? 'no maximum';
        out.push(f('link-max-unknown', 'skip', dev.bdf, `${what} at ${got}; what it can do is not known (${why})`, undefined, got));
      } else {
        out.push(f('link-ok', 'pass', dev.bdf, `${what} ${got} of ${want}`, want, got));
      }
    }
    return out;
  },
});
