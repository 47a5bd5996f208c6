// What a PCI function is to the Direct NIC rules (rdma_topo's device table: vendor, device and class), and tree walks
// over the inventory's functions (parent = the last bridge of the sysfs path).
import { nul } from '../model/fact.js';
import type { Bdf, Inventory, PciDevice } from '../model/inventory.js';

export type PciKind = 'grace_rp' | 'vera_rp' | 'cx_nic' | 'bf3_nic' | 'cx_dma' | 'cx_switch' | 'bf3_switch' | 'nvgpu' | 'generic_rp' | 'bridge' | 'other' | 'unknown';

const NVIDIA = 0x10de;
const MELLANOX = 0x15b3;
/** First match wins, as in rdma_topo's table. */
const BY_ID: readonly [vendor: number, device: number, kind: PciKind][] = [
  [NVIDIA, 0x22b1, 'grace_rp'], [NVIDIA, 0x22b2, 'grace_rp'], [NVIDIA, 0x22b8, 'grace_rp'],
  [NVIDIA, 0x2f95, 'vera_rp'], [NVIDIA, 0x2f96, 'vera_rp'],
  [MELLANOX, 0x1021, 'cx_nic'], [MELLANOX, 0x1023, 'cx_nic'], [MELLANOX, 0x1025, 'cx_nic'], // ConnectX-7, -8, -9
  [MELLANOX, 0xa2dc, 'bf3_nic'], [MELLANOX, 0x2100, 'cx_dma'], // BlueField-3; ConnectX-8 Data Direct
  [MELLANOX, 0x197b, 'bf3_switch'], [MELLANOX, 0x197c, 'cx_switch'], [MELLANOX, 0x1979, 'cx_switch'],
];

/**
 * 'unknown': a function whose IDs could not be read (its config space and sysfs file both failed) and that could be
 * one of the kinds above: its vendor unread, or NVIDIA's or Mellanox's with its device or (NVIDIA) class unread.
 * Never 'other': a DMA function or a ConnectX switch port taken for "something else" changed the platform.
 */
export function typeOf(d: PciDevice | undefined): PciKind {
  if (!d) return 'other';
  const [vendor, device, classCode] = [nul(d.vendor), nul(d.device), nul(d.classCode)];
  const hit = BY_ID.find(([v, id]) => v === vendor && id === device);
  if (hit) return hit[2];
  if (vendor === null || ((vendor === NVIDIA || vendor === MELLANOX) && device === null) || (vendor === NVIDIA && classCode === null)) return 'unknown';
  if (vendor === NVIDIA && classCode !== null && classCode >> 16 === 0x03) return 'nvgpu';
  if (classCode === 0x060400) return d.bridges.length === 0 ? 'generic_rp' : 'bridge';
  return 'other';
}

export const parentOf = (inv: Inventory, d: PciDevice): PciDevice | undefined => {
  const p = d.bridges.at(-1);
  return p === undefined ? undefined : inv.pci.get(p);
};

/** Every function of the inventory below a bridge. */
export const under = (inv: Inventory, bdf: Bdf): PciDevice[] => [...inv.pci.values()].filter((d) => d.bridges.includes(bdf));

export const childrenOf = (inv: Inventory, bdf: Bdf): PciDevice[] => [...inv.pci.values()].filter((d) => d.bridges.at(-1) === bdf);
