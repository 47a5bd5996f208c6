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

function toldDifferences(a: CompareView, b: CompareView): Difference[] {
  return [
    ...presence(a, b),
    ...placement(a, b),
    ...topology(a, b),
    ...AREAS.flatMap((r) => r.compare(a, b)),
    ...iommu(a, b),
    ...ats(a, b),
    ...modules(a, b),
    ...versions(a, b),
  ];
}

export function compareViews(a: CompareView, b: CompareView): Difference[] {
  const told = toldDifferences(a, b);
  return sortDifferences([...told, ...flagged(a, b, told)]);
}

/**
 * compareViews(a, b), and what the universal rules flag on the reference b and not on a (flagged.ts the other way
 * round; a and b as the reference sees them: a its finding, b `not flagged on the reference`). `compare A B` takes B as
 * known-good; the fleet has no known-good node, so a fault only the reference has must count too (fleet/facts.ts).
 */
export function compareViewsBothWays(a: CompareView, b: CompareView): { readonly differences: Difference[]; readonly onReference: Difference[] } {
  const told = toldDifferences(a, b);
  return { differences: sortDifferences([...told, ...flagged(a, b, told)]), onReference: flagged(b, a, told) };
}

export function compareInventories(a: Inventory, b: Inventory): Difference[] {
  return compareViews(compareView(a), compareView(b));
}
