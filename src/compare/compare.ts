// compare A B: every dimension of the GPU↔NIC path, suspect (A) against known-good (B), worst first. Each side is
// first reduced to its view (view.ts): what a comparison reads, the same whether it comes from a snapshot or from the
// summary a node wrote beside it.
import type { Inventory } from '../model/inventory.js';
import { aer } from './aer.js';
import { bar1 } from './bar1.js';
import { relaxedOrdering } from './devctl.js';
import { throttle } from './throttle.js';
import { payload } from './payload.js';
import { acs, links, placement, presence, topology } from './devices.js';
import { ats, gpudirect, iommu, memlock, modules, versions } from './node.js';
import { sortDifferences, type Difference } from './types.js';
import { compareView, type CompareView } from './view.js';

export function compareViews(a: CompareView, b: CompareView): Difference[] {
  return sortDifferences([
    ...presence(a, b),
    ...placement(a, b),
    ...topology(a, b),
    ...links(a, b),
    ...acs(a, b),
    ...bar1(a, b),
    ...aer(a, b),
    ...relaxedOrdering(a, b),
    ...throttle(a, b),
    ...payload(a, b),
    ...iommu(a, b),
    ...gpudirect(a, b),
    ...memlock(a, b),
    ...ats(a, b),
    ...modules(a, b),
    ...versions(a, b),
  ]);
}

export function compareInventories(a: Inventory, b: Inventory): Difference[] {
  return compareViews(compareView(a), compareView(b));
}
