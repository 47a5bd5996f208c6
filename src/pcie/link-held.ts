// Whether a port holds its link below its top speed: Link Control 2's Target Link Speed under the link's top, as the
// kernel's PCIe bandwidth controller sets it to throttle (drivers/pci/pcie/bwctrl.c). The link's top is the slower of
// the port's and the device's below it Link Capabilities' Max Link Speed: bwctrl's state 0 (pcie_bwctrl_select_speed)
// targets the speeds both support, so a Gen4 device under a Gen5 port is at its top with a Gen4 target. A link that
// runs slower while its target is the top (a GPU idling at 2.5 GT/s) is not held.
import { ABSENT, type Fact, present, unknown, within } from '../model/fact.js';
import type { Inventory, PcieCooling } from '../model/inventory.js';

export interface Held {
  readonly held: boolean;
  /** The link's top speed (the port's and the device's below it, the slower) and the port's Target Link Speed, GT/s. */
  readonly top: number;
  /** The port's own top speed, GT/s. */
  readonly portTop: number;
  readonly target: number;
}

/** Asked of a cooling device above state 0, whose port's target the inventory read (thermal.ts). */
export function linkHeld(inv: Inventory, c: PcieCooling): Fact<Held> {
  const pcie = within(inv.pci.get(c.port)?.config ?? ABSENT, (x) => x.pcie, 'no config space');
  if (pcie.state !== 'present') return pcie.state === 'absent' ? unknown('no PCI Express capability') : pcie;
  const portTop = pcie.value.linkCap?.speed ?? null;
  if (portTop === null) return unknown('its Link Capabilities speed not readable');
  if (c.target.state !== 'present') return c.target.state === 'absent' ? unknown('its Link Control 2 Target Link Speed not read') : c.target;
  // The first function on its secondary bus, as bwctrl takes it (inv.pci holds every device below a path's ports).
  const port = inv.pci.get(c.port);
  const below = [...inv.pci.values()].filter((d) => port !== undefined && d.sysPath.slice(0, d.sysPath.lastIndexOf('/')) === port.sysPath).sort((a, b) => (a.bdf < b.bdf ? -1 : 1))[0];
  if (below === undefined) return unknown('no device below it was read');
  const dev = within(below.config, (x) => x.pcie, 'no config space');
  const devTop = dev.state === 'present' ? (dev.value.linkCap?.speed ?? null) : null;
  if (devTop === null) return unknown(`the Link Capabilities speed of ${below.bdf} below it not readable`);
  const top = Math.min(portTop, devTop);
  return present({ held: c.target.value < top, top, portTop, target: c.target.value });
}
