// compare A B: Device Control of each RDMA adapter (pcie-relaxed-ordering), suspect against reference, by address.
import { nul } from '../model/fact.js';
import type { Inventory } from '../model/inventory.js';
import type { DevCtl } from '../model/pci.js';
import { diff, type Difference } from './types.js';

const devCtlOf = (inv: Inventory, bdf: string): DevCtl | null => {
  const cfg = inv.pci.get(bdf)?.config;
  const pcie = cfg ? nul(cfg)?.pcie : undefined;
  return pcie?.state === 'present' ? pcie.value.devCtl : null;
};

export function relaxedOrdering(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  for (const n of b.nics) {
    if (!n.bdf || !a.nics.some((x) => x.bdf === n.bdf)) continue;
    const [x, y] = [devCtlOf(a, n.bdf), devCtlOf(b, n.bdf)];
    const text = (d: DevCtl | null): string => (d === null ? 'not readable' : `RlxdOrd${d.relaxedOrdering ? '+' : '-'}`);
    if (text(x) === text(y)) continue;
    if (!x || !y) out.push(diff('minor', 'relaxed-ordering', n.bdf, text(x), text(y), 'unknown-side'));
    else out.push(diff(y.relaxedOrdering ? 'major' : 'minor', 'relaxed-ordering', n.bdf, text(x), text(y), y.relaxedOrdering ? 'ro-off' : 'better-than-reference'));
  }
  return out;
}
