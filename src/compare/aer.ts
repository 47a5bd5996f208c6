// compare A B: AER state of each device both nodes have on their GPU↔NIC paths (pcie-aer). Uncorrectable errors the
// suspect has and the reference has not rank first; then error reporting the suspect lost, then counters the kernel
// no longer keeps. Correctable counts are not compared: without each node's uptime they say nothing.
import { deviceAer, enablesText, lostEnables, uncorrectable } from '../checks/aer-judge.js';
import type { Inventory, PciDevice } from '../model/inventory.js';
import { diff, type Difference } from './types.js';

const errorsOf = (d: PciDevice): string => uncorrectable(d, deviceAer(d)).errors.join('; ');
const enables = (d: PciDevice): string | null => {
  const c = deviceAer(d).devCtl;
  return c ? enablesText(c) : null;
};

export function aer(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  for (const [bdf, x] of a.pci) {
    const y = b.pci.get(bdf);
    if (!y) continue;
    const [ex, ey] = [errorsOf(x), errorsOf(y)];
    if (ex && ex !== ey) out.push(diff('critical', 'aer', bdf, `uncorrectable: ${ex}`, ey ? `uncorrectable: ${ey}` : 'no uncorrectable error', 'aer-uncorrectable'));
    const [rx, ry] = [enables(x), enables(y)];
    if (rx && ry && rx !== ry) {
      const lost = lostEnables(ry, rx).length > 0;
      out.push(diff(lost ? 'major' : 'minor', 'aer', bdf, `DevCtl ${rx}`, `DevCtl ${ry}`, lost ? 'aer-reporting-off' : 'better-than-reference'));
    }
    const kept = (d: PciDevice): boolean => d.aer.correctable.state === 'present';
    if (!kept(x) && kept(y)) out.push(diff('minor', 'aer', bdf, `no AER counters (aer_dev_* ${x.aer.correctable.state})`, 'aer_dev_* counters', 'aer-unknown'));
  }
  return out;
}
