// What a Direct NIC platform's rules cover beyond the GPU↔NIC paths: rdma_topo reads the whole tree, and requires the
// kernel's isolation on every Grace or Vera root port and every ConnectX/BlueField switch port, and a DMA function
// whose GPU is gone is a complex it refuses. Read only on a node whose paths already show such a platform (a Grace or
// Vera root port, a ConnectX or BlueField switch port, a DMA function): there, each root port's vendor is read, and
// below each NVIDIA one its bridges and Mellanox functions (a NIC without its RDMA device, a DMA function off every
// path); an NVMe drive or other function there is not the platform's and stays unread. None on an x86 node.
import type { Host } from '../host/host.js';
import { valueOf } from '../model/fact.js';
import type { Bdf, PciDevice } from '../model/inventory.js';
import { parsePciId } from '../parsers/sysfs.js';
import { typeOf } from '../pcie/pci-kind.js';
import type { PciSkeleton } from './pci.js';
import { factParsed, type Notes } from './read.js';

const PLATFORM = new Set(['grace_rp', 'vera_rp', 'cx_switch', 'bf3_switch', 'cx_dma']);
const NVIDIA = 0x10de;
const MELLANOX = 0x15b3;
const isBridge = (s: PciSkeleton): boolean => valueOf(s.classCode) === 0x060400;

export async function platformExtra(host: Host, detailed: readonly PciDevice[], all: readonly PciSkeleton[], have: ReadonlySet<Bdf>, notes: Notes): Promise<PciSkeleton[]> {
  if (!detailed.some((d) => PLATFORM.has(typeOf(d)))) return [];
  const vendor = async (s: PciSkeleton): Promise<number | null> => valueOf(s.vendor) ?? valueOf(await factParsed(host, `${s.sysPath}/vendor`, parsePciId, notes, 'absent')) ?? null;
  const roots = all.filter((s) => s.bridges.length === 0 && isBridge(s));
  const nvidia = new Set<Bdf>();
  for (const [s, v] of await Promise.all(roots.map(async (s) => [s, await vendor(s)] as const))) if (v === NVIDIA) nvidia.add(s.bdf);
  if (nvidia.size === 0) return [];
  const below = all.filter((s) => !have.has(s.bdf) && s.bridges.length > 0 && nvidia.has(s.bridges[0]!));
  const mellanox = await Promise.all(below.map(async (s) => (isBridge(s) || (await vendor(s)) === MELLANOX ? s : null)));
  return [...all.filter((s) => nvidia.has(s.bdf) && !have.has(s.bdf)), ...mellanox.filter((s): s is PciSkeleton => s !== null)];
}
