// Pure: the adapters whose name and PCI address no longer pair as in the node's class (a udev or rdma-core naming
// change, two adapters that swapped names). A bandwidth band is keyed by the adapter's name (and its recipe, which
// names it: `ib_write_bw -d mlx5_0`), so after a swap the band of one adapter would judge the other: a 400 Gb/s
// adapter held to a 200 Gb/s band passes when it should not, the other fails and drains a healthy node. Their
// paths are not judged (bw-renamed), whichever name they carry now.
import type { BaselineDevice } from '../model/baseline.js';
import { valueOf } from '../model/fact.js';
import type { RdmaNic } from '../model/inventory.js';

/** Adapter name (the baseline's or the node's) → why its bands cannot be trusted (the first reason found); empty when
 * every name pairs as recorded. */
export function renamedNics(recorded: readonly BaselineDevice[], live: readonly RdmaNic[]): Map<string, string> {
  const out = new Map<string, string>();
  const say = (names: readonly string[], why: string): void => names.forEach((n) => out.has(n) || out.set(n, why));
  // Two RDMA devices may share a PCI function (siw or rxe beside the adapter's own): names a set per address.
  const namesAt = new Map<string, Set<string>>();
  const liveBdf = new Map<string, string>();
  for (const n of live) {
    // An adapter whose address cannot be read: its name cannot be shown to be the recorded one's.
    if (n.bdf.state === 'unknown') say([n.name], `its PCI address could not be read (${n.bdf.why})`);
    const bdf = valueOf(n.bdf)?.toLowerCase();
    if (bdf === undefined) continue;
    namesAt.set(bdf, (namesAt.get(bdf) ?? new Set<string>()).add(n.name));
    liveBdf.set(n.name, bdf);
  }
  for (const d of recorded) {
    if (d.role !== 'nic' || d.name === undefined) continue;
    const bdf = d.bdf.toLowerCase();
    const now = namesAt.get(bdf);
    if (now !== undefined && !now.has(d.name)) say([d.name, ...now], `the adapter at ${bdf} is ${[...now].join(' and ')} here, ${d.name} in the baseline`);
    const moved = liveBdf.get(d.name);
    if (moved !== undefined && moved !== bdf) say([d.name], `${d.name} is the adapter at ${moved} here, at ${bdf} in the baseline`);
  }
  return out;
}
