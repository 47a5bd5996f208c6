// Whether a port holds its link below its top speed: Link Control 2's Target Link Speed under Link Capabilities' Max
// Link Speed, as the kernel's PCIe bandwidth controller sets it to throttle (drivers/pci/pcie/bwctrl.c). A link that
// runs slower while its target is the top (a slower device below, a GPU idling at 2.5 GT/s) is not held.
import { ABSENT, type Fact, present, unknown, within } from '../model/fact.js';
import type { Inventory, PcieCooling } from '../model/inventory.js';

export interface Held {
  readonly held: boolean;
  /** The port's top speed and its Target Link Speed, GT/s. */
  readonly top: number;
  readonly target: number;
}

/** Asked of a cooling device above state 0, whose port's target the inventory read (thermal.ts). */
export function linkHeld(inv: Inventory, c: PcieCooling): Fact<Held> {
  const pcie = within(inv.pci.get(c.port)?.config ?? ABSENT, (x) => x.pcie, 'no config space');
  if (pcie.state !== 'present') return pcie.state === 'absent' ? unknown('no PCI Express capability') : pcie;
  const top = pcie.value.linkCap.speed;
  if (top === null) return unknown('its Link Capabilities speed not readable');
  if (c.target.state !== 'present') return c.target.state === 'absent' ? unknown('its Link Control 2 Target Link Speed not read') : c.target;
  return present({ held: c.target.value < top, top, target: c.target.value });
}
