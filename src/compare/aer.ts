// compare A B: AER state of each device both nodes have on their GPU↔NIC paths (pcie-aer). Uncorrectable errors the
// suspect has and the reference has not rank first; then error reporting the suspect lost, then counters the kernel
// no longer keeps. Correctable counts are not compared: without each node's uptime they say nothing.
import { deviceAer, enablesText, lostEnables, uncorrectable } from '../checks/aer-judge.js';
import type { PciDevice } from '../model/inventory.js';
import { diff, type Difference } from './types.js';
import { devicesOf } from './by-bdf.js';
import type { CompareView } from './view.js';

export const aerErrorsText = (d: PciDevice): string => uncorrectable(d, deviceAer(d)).errors.join('; ');
export const aerEnablesText = (d: PciDevice): string | null => {
  const c = deviceAer(d).devCtl;
  return c ? enablesText(c) : null;
};

export function aer(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  const pb = devicesOf(b);
  for (const x of a.pci) {
    const y = pb.get(x.bdf);
    if (!y) continue;
    const [ex, ey] = [x.aerErrors, y.aerErrors];
    if (ex && ex !== ey) out.push(diff('critical', 'aer', x.bdf, `uncorrectable: ${ex}`, ey ? `uncorrectable: ${ey}` : 'no uncorrectable error', 'aer-uncorrectable'));
    const [rx, ry] = [x.aerEnables, y.aerEnables];
    if (rx && ry && rx !== ry) {
      const lost = lostEnables(ry, rx).length > 0;
      out.push(diff(lost ? 'major' : 'minor', 'aer', x.bdf, `DevCtl ${rx}`, `DevCtl ${ry}`, lost ? 'aer-reporting-off' : 'better-than-reference'));
    }
    if (x.aerCounters !== 'present' && y.aerCounters === 'present') out.push(diff('minor', 'aer', x.bdf, `no AER counters (aer_dev_* ${x.aerCounters})`, 'aer_dev_* counters', 'aer-unknown'));
  }
  return out;
}
