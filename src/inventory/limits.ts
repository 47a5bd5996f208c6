// How much of a node the gate reads (DESIGN §9: no synchronous phase may outlive the deadline, whatever the input's
// size). Each count is checked as soon as its listing is read, before any per-entry work: a node with more is refused
// as a whole ("could not tell": LimitError, an internal error the policy fails open on), never judged in part and
// never drained for its size. The largest real node modelled (test/gen/topologies/hgx-h100-sriov.ts: 8 HGX H100
// GPUs beside 8 dual-port ConnectX-7 at their SR-IOV limit) has 2,088 PCI functions and 2,048 RDMA devices; these
// leave twice that.
import { LimitError } from '../errors.js';
import { BASELINE_LIMITS } from '../baseline/limits.js';

export const INVENTORY_LIMITS = {
  /** Entries of /sys/bus/pci/devices (every function, VFs included). */
  pciFunctions: 4096,
  /** Entries of /sys/class/infiniband (each VF bound to mlx5_core is one). */
  rdmaDevices: 4096,
  /** Entries of /sys/class/thermal (cooling devices: one per CPU on some kernels, one per PCIe port; thermal zones). */
  coolingDevices: 8192,
  /** GPU × RDMA adapter pairs: what topology-distance, pcie-acs and a baseline class (its paths) hold. */
  paths: BASELINE_LIMITS.pathsPerClass,
} as const;

export type InventoryLimit = keyof typeof INVENTORY_LIMITS;

const WHAT: Record<InventoryLimit, string> = {
  pciFunctions: 'PCI functions in /sys/bus/pci/devices',
  rdmaDevices: 'RDMA devices in /sys/class/infiniband',
  coolingDevices: 'cooling devices in /sys/class/thermal',
  paths: 'GPU↔RDMA adapter pairs',
};

/** Throws LimitError when `n` is past its limit; said before the work that would grow with it. */
export function requireWithin(limit: InventoryLimit, n: number): void {
  const max = INVENTORY_LIMITS[limit];
  if (n > max) throw new LimitError(`${n} ${WHAT[limit]}, more than the ${max} gdrgate reads within its deadline: this node was not judged (docs/limits-and-state.md)`);
}

/** The listings whose every entry the inventory reads, by kernel path. */
const LISTINGS: Readonly<Record<string, InventoryLimit>> = {
  '/sys/bus/pci/devices': 'pciFunctions',
  '/sys/class/infiniband': 'rdmaDevices',
  '/sys/class/thermal': 'coolingDevices',
};

/** For host/paced.ts: refuses a listing of one of those directories past its limit (every entry counted). */
export function requireListingWithin(path: string, n: number): void {
  const limit = LISTINGS[path];
  if (limit !== undefined) requireWithin(limit, n);
}
