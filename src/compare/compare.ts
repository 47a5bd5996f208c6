// compare A B: every dimension of the GPU↔NIC path, suspect (A) against known-good (B), worst first. Each side is
// first reduced to its view (view.ts): what a comparison reads, the same whether it comes from a snapshot or from the
// summary a node wrote beside it. Then each area record's dimensions (areas/index.ts), and those no record owns yet
// (devices, topology, IOMMU, ATS, modules, versions).
import type { Inventory } from '../model/inventory.js';
import { AREAS } from '../areas/index.js';
import { placement, presence, topology } from './devices.js';
import { ats, iommu, modules, versions } from './node.js';
import { flagged } from './flagged.js';
import { sortDifferences } from './order.js';
import type { Difference } from './types.js';
import { compareView, type CompareView } from './view.js';

export function compareViews(a: CompareView, b: CompareView): Difference[] {
  const told = [
    ...presence(a, b),
    ...placement(a, b),
    ...topology(a, b),
    ...AREAS.flatMap((r) => r.compare(a, b)),
    ...iommu(a, b),
    ...ats(a, b),
    ...modules(a, b),
    ...versions(a, b),
  ];
  return sortDifferences([...told, ...flagged(a, b, told)]);
}

export function compareInventories(a: Inventory, b: Inventory): Difference[] {
  return compareViews(compareView(a), compareView(b));
}
