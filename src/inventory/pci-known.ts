// Whether an inventory knows the node's device lists: a listing that failed (unreadable, or not recorded by a
// snapshot) leaves the inventory without those devices, which a check would read as "no GPU", "GPU missing" or "no
// RDMA adapter", and a comparison as "every device missing". Such an inventory is not judged.
import { Unreadable } from '../errors.js';
import type { Inventory } from '../model/inventory.js';

const PCI_LIST = '/sys/bus/pci/devices: ';
/** The listings whose entries are what the checks iterate (inventory/read.ts listWhole notes their failures). */
const DEVICE_LISTS = [PCI_LIST, '/sys/class/infiniband: ', '/sys/devices/system/node: ', '/sys/module: ', '/sys/class/iommu: ', '/sys/kernel/iommu_groups: '];

/** The first note of a listing under one of `prefixes` that failed (not absent), cut to 240 characters; else null. */
function failedListing(inv: Inventory, prefixes: readonly string[]): string | null {
  const n = inv.notes.find((x) => prefixes.some((p) => x.startsWith(p)) && !x.endsWith(': absent'));
  return n === undefined ? null : n.slice(0, 240);
}

/** Why the PCI device list is unknown (the inventory's note), or null when it was read or found absent. */
export const pciListUnknown = (inv: Inventory): string | null => failedListing(inv, [PCI_LIST]);

/** Why one of the node's device lists is unknown, or null when every one was read or found absent. */
export const deviceListUnknown = (inv: Inventory): string | null => failedListing(inv, DEVICE_LISTS);

/** Throws Unreadable when a device list is unknown: could not tell, so nothing is judged (never an empty node). */
export function requireDeviceLists(inv: Inventory): void {
  const why = deviceListUnknown(inv);
  if (why !== null) throw new Unreadable(`${why}: the node's devices could not be listed, so nothing was judged`);
}
