// compare A B: every dimension of the GPU↔NIC path, suspect (A) against known-good (B), worst first: each area
// record's (areas/index.ts), then the dimensions no record owns yet (devices, topology, IOMMU, ATS, modules, versions).
import type { Inventory } from '../model/inventory.js';
import { AREAS } from '../areas/index.js';
import { placement, presence, topology } from './devices.js';
import { ats, iommu, modules, versions } from './node.js';
import { sortDifferences } from './order.js';
import type { Difference } from './types.js';

export function compareInventories(a: Inventory, b: Inventory): Difference[] {
  return sortDifferences([
    ...presence(a, b),
    ...placement(a, b),
    ...topology(a, b),
    ...AREAS.flatMap((r) => r.compare(a, b)),
    ...iommu(a, b),
    ...ats(a, b),
    ...modules(a, b),
    ...versions(a, b),
  ]);
}
