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
  const liveAt = new Map<string, string>();
  for (const n of live) {
    const bdf = valueOf(n.bdf);
    if (bdf !== undefined) liveAt.set(bdf.toLowerCase(), n.name);
  }
  const liveBdf = new Map([...liveAt].map(([bdf, name]) => [name, bdf]));
  for (const d of recorded) {
    if (d.role !== 'nic' || d.name === undefined) continue;
    const bdf = d.bdf.toLowerCase();
    const now = liveAt.get(bdf);
    if (now !== undefined && now !== d.name) {
      const why = `the adapter at ${bdf} is ${now} here, ${d.name} in the baseline`;
      for (const name of [d.name, now]) if (!out.has(name)) out.set(name, why);
    }
    const moved = liveBdf.get(d.name);
    if (moved !== undefined && moved !== bdf) {
      const why = `${d.name} is the adapter at ${moved} here, at ${bdf} in the baseline`;
      if (!out.has(d.name)) out.set(d.name, why);
    }
  }
  return out;
}
