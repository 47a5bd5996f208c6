// GPU↔NIC / GPU↔GPU PCIe path class with nvidia-smi's meaning (topo -m legend), computed from sysfs parent chains.
import type { Bdf, Inventory, PathClass, PciDevice } from '../model/inventory.js';
import { parseCpuList } from '../parsers/sysfs.js';

const DOWNSTREAM = 6;
const UPSTREAM = 5;

function portType(inv: Inventory, bdf: Bdf): number | null {
  const c = inv.pci.get(bdf)?.config;
  return c?.known && c.value.pcie ? c.value.pcie.portType : null;
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
    return t === DOWNSTREAM && parent !== undefined && portType(inv, parent) === UPSTREAM ? parent : me;
  }
  return i > 0 && i % 2 === 0 ? chain[i - 1]! : me;
}

/** NUMA node of a device: sysfs numa_node, else the node whose CPUs are the device's local CPUs. */
export function numaOf(inv: Inventory, d: PciDevice): number | null {
  if (d.numaNode !== null) return d.numaNode;
  const nodes = numaAffinity(inv, d);
  return nodes.length === 1 ? nodes[0]! : null;
}

export function numaAffinity(inv: Inventory, d: PciDevice): number[] {
  if (d.numaNode !== null) return [d.numaNode];
  if (!d.localCpuList) return [];
  const cpus = parseCpuList(d.localCpuList);
  if (!cpus.ok) return [];
  const mine = new Set(cpus.value);
  return inv.numa
    .filter((n) => {
      const c = parseCpuList(n.cpuList);
      return c.ok && c.value.some((x) => mine.has(x));
    })
    .map((n) => n.id);
}

export interface PathInfo {
  readonly cls: PathClass | 'X';
  /** Bridges a peer transaction crosses below the common switch (where ACS redirect matters); empty above PXB. */
  readonly peerBridges: readonly Bdf[];
}

export function classify(inv: Inventory, a: PciDevice, b: PciDevice): PathInfo {
  if (a.bdf === b.bdf) return { cls: 'X', peerBridges: [] };
  let k = 0;
  if (a.hostBridge === b.hostBridge) {
    while (k < a.bridges.length && k < b.bridges.length && a.bridges[k] === b.bridges[k]) k++;
  }
  if (k === 0) {
    if (a.hostBridge === b.hostBridge) return { cls: 'PHB', peerBridges: [] };
    const na = numaOf(inv, a);
    const nb = numaOf(inv, b);
    return { cls: na !== null && nb !== null && na !== nb ? 'SYS' : 'NODE', peerBridges: [] };
  }
  const below = [...a.bridges.slice(k), ...b.bridges.slice(k)];
  const units = new Set<Bdf>([unitOf(inv, a.bridges, k - 1)]);
  a.bridges.forEach((_, i) => i >= k && units.add(unitOf(inv, a.bridges, i)));
  b.bridges.forEach((_, i) => i >= k && units.add(unitOf(inv, b.bridges, i)));
  return { cls: units.size === 1 ? 'PIX' : 'PXB', peerBridges: below };
}
