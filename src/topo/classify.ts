// GPU↔NIC / GPU↔GPU PCIe path class with nvidia-smi's meaning (topo -m legend), computed from sysfs parent chains.
import { ABSENT, type Fact, present, unknown, valueOf, within } from '../model/fact.js';
import { type Bdf, type Inventory, type PathClass, type PciDevice, UNPLACED } from '../model/inventory.js';
import { cpusCovered, cpusOverlap, cpusWithin, mergeCpus } from '../parsers/sysfs.js';

const DOWNSTREAM = 6;
const UPSTREAM = 5;

/** Device/Port Type from config space; null when config space or its PCIe capability is not there to read. */
export function portType(inv: Inventory, bdf: Bdf): number | null {
  return valueOf(within(inv.pci.get(bdf)?.config ?? ABSENT, (c) => c.pcie, 'no config'))?.portType ?? null;
}

/**
 * A PCIe switch is an upstream port plus its downstream ports; nvidia-smi and NCCL count it as one bridge.
 * The unit of a bridge is its switch's upstream port, or itself. Without config space (not root) the
 * chain position decides: root port, then (upstream, downstream) pairs.
 */
function unitOf(inv: Inventory, chain: readonly Bdf[], i: number): Bdf {
  const me = chain[i]!;
  const t = portType(inv, me);
  if (t !== null) {
    const parent = chain[i - 1];
    if (t !== DOWNSTREAM || parent === undefined) return me;
    // A parent whose config space cannot be read (all ones, gone) is placed by chain position, as below.
    const pt = portType(inv, parent);
    return pt === UPSTREAM || (pt === null && i % 2 === 0) ? parent : me;
  }
  return i > 0 && i % 2 === 0 ? chain[i - 1]! : me;
}

/**
 * NUMA node of a device: sysfs numa_node, else the one node whose CPUs are the device's local CPUs. Absent: the
 * firmware gives no affinity; unknown: numa_node could not be read and the local CPUs do not tell either.
 */
export function numaFact(inv: Inventory, d: PciDevice): Fact<number> {
  if (d.numaNode.state === 'present') return d.numaNode;
  const nodes = numaAffinity(inv, d);
  if (nodes === null) return unknown(`no numa_node, and its local CPUs or a NUMA node's CPUs could not be read (${d.localCpus.state === 'unknown' ? d.localCpus.why : 'a node\'s cpulist'})`);
  if (nodes.length === 1) return present(nodes[0]!);
  // Local CPUs on several nodes is no affinity, as numa_node -1 is; only an unreadable numa_node is unknown.
  return d.numaNode.state === 'unknown' ? d.numaNode : ABSENT;
}

export function numaOf(inv: Inventory, d: PciDevice): number | null {
  return valueOf(numaFact(inv, d)) ?? null;
}

/** The NUMA nodes a device's local CPUs lie on; null: unknown (its local CPUs, or a node's CPUs, were not read). */
export function numaAffinity(inv: Inventory, d: PciDevice): number[] | null {
  if (d.numaNode.state === 'present') return [d.numaNode.value];
  if (d.localCpus.state === 'unknown') return null;
  const mine = valueOf(d.localCpus);
  if (!mine || mine.length === 0) return [];
  const nodes = inv.numa.map((n) => ({ id: n.id, cpus: valueOf(n.cpus) }));
  if (nodes.some((n) => n.cpus === undefined)) return null;
  // Online local CPUs that no node holds: the node map is not the kernel's whole one (a cpulist read empty, a node
  // not listed), and a node the device would lie on may be the one missing: unknown, never the nodes that are left.
  // (Only online ones: arm64 gives a device of no node cpu_all_mask, every CPU NR_CPUS allows, drivers/base/arch_numa.c.)
  const online = valueOf(inv.cpusOnline);
  if (online && !cpusCovered(cpusWithin(mine, online), mergeCpus(nodes.flatMap((n) => n.cpus!)))) return null;
  return nodes.filter((n) => cpusOverlap(mine, n.cpus!)).map((n) => n.id);
}



/** NUMA nodes that have CPUs, or may have (their cpulist unread); a memory-only node (GH200's HBM, CXL) has none. */
const cpuNodes = (inv: Inventory): number => inv.numa.filter((n) => n.cpus.state !== 'present' || n.cpus.value.length > 0).length;

export interface PathInfo {
  /** '?': the class depends on a fact that could not be read or is not there (the NUMA node of one side). */
  readonly cls: PathClass | 'X' | '?';
  /** Bridges a peer transaction crosses below the common switch (where ACS redirect matters); empty above PXB. */
  readonly peerBridges: readonly Bdf[];
}

export function classify(inv: Inventory, a: PciDevice, b: PciDevice): PathInfo {
  if (a.bdf === b.bdf) return { cls: 'X', peerBridges: [] };
  // A function whose place could not be read (its /sys/bus/pci/devices entry unresolvable: inventory/pci.ts) shares
  // no known switch with anything: its paths are unknown, never NODE or SYS by the NUMA nodes alone.
  if (a.hostBridge === UNPLACED || b.hostBridge === UNPLACED) return { cls: '?', peerBridges: [] };
  let k = 0;
  if (a.hostBridge === b.hostBridge) {
    while (k < a.bridges.length && k < b.bridges.length && a.bridges[k] === b.bridges[k]) k++;
  }
  if (k === 0) {
    if (a.hostBridge === b.hostBridge) return { cls: 'PHB', peerBridges: [] };
    const [na, nb] = [numaFact(inv, a), numaFact(inv, b)];
    if (na.state === 'unknown' || nb.state === 'unknown') return { cls: '?', peerBridges: [] };
    if (na.state === 'present' && nb.state === 'present') return { cls: na.value !== nb.value ? 'SYS' : 'NODE', peerBridges: [] };
    // A side without NUMA affinity (numa_node -1: every CPU its local one) may lie on any socket: NODE only where
    // no second NUMA node has CPUs (one with unreadable CPUs may).
    return { cls: cpuNodes(inv) > 1 ? '?' : 'NODE', peerBridges: [] };
  }
  const below = [...a.bridges.slice(k), ...b.bridges.slice(k)];
  const units = new Set<Bdf>([unitOf(inv, a.bridges, k - 1)]);
  a.bridges.forEach((_, i) => i >= k && units.add(unitOf(inv, a.bridges, i)));
  b.bridges.forEach((_, i) => i >= k && units.add(unitOf(inv, b.bridges, i)));
  return { cls: units.size === 1 ? 'PIX' : 'PXB', peerBridges: below };
}
