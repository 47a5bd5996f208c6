// Whether an inventory knows its PCI device list: a listing that failed (unreadable, or not recorded by a snapshot)
// leaves the inventory without devices, which every comparison would read as "every device missing".
import type { Inventory } from '../model/inventory.js';

const PCI_LIST = '/sys/bus/pci/devices: ';

/** Why the PCI device list is unknown (the inventory's note), or null when it was read or found absent. */
export function pciListUnknown(inv: Inventory): string | null {
  const n = inv.notes.find((x) => x.startsWith(PCI_LIST));
  return n !== undefined && n !== `${PCI_LIST}absent` ? n.slice(0, 240) : null;
}
