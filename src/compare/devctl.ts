// compare A B: Device Control of each RDMA adapter (pcie-relaxed-ordering), suspect against reference, by address.
import { nul } from '../model/fact.js';
import type { Inventory } from '../model/inventory.js';
import { diff, type Difference } from './types.js';
import { devicesOf } from './by-bdf.js';
import type { CompareView } from './view.js';

/** Relaxed Ordering in Device Control; null when config space or its PCIe capability was not read. */
export const roOf = (inv: Inventory, bdf: string): boolean | null => {
  const cfg = inv.pci.get(bdf)?.config;
  const pcie = cfg ? nul(cfg)?.pcie : undefined;
  return pcie?.state === 'present' ? pcie.value.devCtl.relaxedOrdering : null;
};

export function relaxedOrdering(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  const [pa, pb] = [devicesOf(a), devicesOf(b)];
  for (const n of b.nics) {
    if (!n.bdf || !a.nics.some((x) => x.bdf === n.bdf)) continue;
    const [x, y] = [pa.get(n.bdf)?.ro ?? null, pb.get(n.bdf)?.ro ?? null];
    const text = (d: boolean | null): string => (d === null ? 'not readable' : `RlxdOrd${d ? '+' : '-'}`);
    if (text(x) === text(y)) continue;
    if (x === null || y === null) out.push(diff('minor', 'relaxed-ordering', n.bdf, text(x), text(y), 'unknown-side'));
    else out.push(diff(y ? 'major' : 'minor', 'relaxed-ordering', n.bdf, text(x), text(y), y ? 'ro-off' : 'better-than-reference'));
  }
  return out;
}
