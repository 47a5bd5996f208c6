// The GPU/NIC matrix of `nvidia-smi topo -m`, computed from the inventory (PCIe classes only; NVLink is not in sysfs).
import { ABSENT, nul, valueOf } from '../model/fact.js';
import type { Inventory, PciDevice } from '../model/inventory.js';
import { classify, numaAffinity, type PathInfo } from './classify.js';

export interface TopoMatrix {
  readonly gpus: readonly { readonly label: string; readonly bdf: string }[];
  /** `bdf`: null when the adapter has no PCI function or its `device` link could not be read (its cells are then `?`). */
  readonly nics: readonly { readonly label: string; readonly name: string; readonly bdf: string | null }[];
  cell(a: string, b: string): string;
  path(a: string, b: string): PathInfo | null;
  cpuAffinity(label: string): string;
  numaAffinity(label: string): string;
}

const built = new WeakMap<Inventory, TopoMatrix>();

/** One matrix per inventory: several checks read it in the same run. */
export function topoMatrix(inv: Inventory): TopoMatrix {
  let m = built.get(inv);
  if (!m) built.set(inv, (m = buildMatrix(inv)));
  return m;
}

function buildMatrix(inv: Inventory): TopoMatrix {
  const gpus = inv.gpus.map((g, i) => ({ label: `GPU${i}`, bdf: g.bdf }));
  const nics = inv.nics.map((n, i) => ({ label: `NIC${i}`, name: n.name, bdf: valueOf(n.bdf) ?? null }));
  const dev = new Map<string, PciDevice | undefined>();
  for (const g of gpus) dev.set(g.label, inv.pci.get(g.bdf));
  for (const n of nics) dev.set(n.label, n.bdf ? inv.pci.get(n.bdf) : undefined);
  const cache = new Map<string, PathInfo | null>();
  const path = (a: string, b: string): PathInfo | null => {
    const key = `${a}|${b}`;
    if (!cache.has(key)) {
      const da = dev.get(a);
      const db = dev.get(b);
      cache.set(key, da && db ? classify(inv, da, db) : null);
    }
    return cache.get(key) ?? null;
  };
  return {
    gpus,
    nics,
    path,
    cell: (a, b) => (a === b ? 'X' : (path(a, b)?.cls ?? '?')),
    cpuAffinity: (label) => nul(dev.get(label)?.localCpuList ?? ABSENT) ?? 'N/A',
    numaAffinity: (label) => {
      const d = dev.get(label);
      const nodes = d ? numaAffinity(inv, d) : [];
      return nodes === null ? '?' : nodes.length ? nodes.join(',') : 'N/A';
    },
  };
}
