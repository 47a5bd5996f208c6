// Whether a host name is a node's: what a snapshot or an exporter says it ran on against the node it is filed under.

/**
 * Whether `host` (a snapshot's host name, a scraped instance's host) is `node`: case aside, the node's labels are the
 * host's first ones. `gpu017` is `gpu017` and `gpu017.cluster.example`; a node named by its full name (Slurm allows a
 * NodeName with dots), `n01.a.b`, is `n01.a.b` and `n01.a.b.example`, never `n01` or `n01.c`.
 */
export function isNodeHost(host: string, node: string): boolean {
  const [h, n] = [host.toLowerCase().split('.'), node.toLowerCase().split('.')];
  return n.length <= h.length && n.every((label, i) => label === h[i]);
}
