// Whether a host name is a node's: what a snapshot or an exporter says it ran on against the node it is filed under;
// names that are one host's in another case.
import { byNatural } from '../model/order.js';

/**
 * Whether `host` (a snapshot's host name, a scraped instance's host) is `node`: case aside, the node's labels are the
 * host's first ones. `gpu017` is `gpu017` and `gpu017.cluster.example`; a node named by its full name (Slurm allows a
 * NodeName with dots), `n01.a.b`, is `n01.a.b` and `n01.a.b.example`, never `n01` or `n01.c`.
 */
export function isNodeHost(host: string, node: string): boolean {
  const [h, n] = [host.toLowerCase().split('.'), node.toLowerCase().split('.')];
  return n.length <= h.length && n.every((label, i) => label === h[i]);
}

/**
 * Names that differ only in case, grouped (each group two or more spellings, sorted naturally): host names are one
 * whatever their case, so each group is one host under several names. Names without a twin are left out.
 */
export function caseTwins(names: Iterable<string>): string[][] {
  const spelled = new Map<string, Set<string>>();
  for (const n of names) {
    const k = n.toLowerCase();
    let set = spelled.get(k);
    if (!set) spelled.set(k, (set = new Set()));
    set.add(n);
  }
  return [...spelled.values()].filter((s) => s.size > 1).map((s) => [...s].sort(byNatural));
}
