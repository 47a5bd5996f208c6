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
 * Names that are one host's, grouped (each group two or more spellings, sorted naturally): names that differ only in
 * case (host names are one whatever their case), and a short name beside a full one whose first labels it is
 * (`gpu017` beside `gpu017.cluster.example`, as isNodeHost reads them). Names without a twin are left out. Linear in
 * the names times their labels: 100,000 names that share a first label are never compared pair by pair.
 */
export function hostTwins(names: Iterable<string>): string[][] {
  const spelled = new Map<string, Set<string>>();
  for (const n of names) {
    const k = n.toLowerCase();
    let set = spelled.get(k);
    if (!set) spelled.set(k, (set = new Set()));
    set.add(n);
  }
  // Lowercase names joined to every shorter one among them that is their first labels: one host per joined set.
  const up = new Map<string, string>([...spelled.keys()].map((k) => [k, k]));
  const root = (k: string): string => {
    let r = k;
    while (up.get(r) !== r) r = up.get(r)!;
    for (let x = k; x !== r; ) {
      const next = up.get(x)!;
      up.set(x, r);
      x = next;
    }
    return r;
  };
  for (const k of spelled.keys()) {
    for (let dot = k.indexOf('.'); dot > 0; dot = k.indexOf('.', dot + 1)) {
      const short = k.slice(0, dot);
      if (up.has(short)) up.set(root(short), root(k));
    }
  }
  const hosts = new Map<string, string[]>();
  for (const [k, set] of spelled) {
    const r = root(k);
    const l = hosts.get(r);
    if (l) for (const n of set) l.push(n);
    else hosts.set(r, [...set]);
  }
  return [...hosts.values()].filter((l) => l.length > 1).map((l) => l.sort(byNatural));
}

/**
 * The directory's name for a name another input gives (a Prometheus `node` label, a collect summary's): the one
 * directory name that is the same host (in another case, or its short or full name), else the name itself. A name
 * two directory names could be (the directory's own twins, said there) stays itself.
 */
export function hostNamer(dirNames: Iterable<string>): (name: string) => string {
  const names = new Map<string, string | null>();
  const shorts = new Map<string, string | null>();
  const put = (m: Map<string, string | null>, k: string, n: string): void => {
    const had = m.get(k);
    m.set(k, had === undefined || had === n ? n : null);
  };
  for (const n of dirNames) {
    const k = n.toLowerCase();
    put(names, k, n);
    for (let dot = k.indexOf('.'); dot > 0; dot = k.indexOf('.', dot + 1)) put(shorts, k.slice(0, dot), n);
  }
  return (name) => {
    const k = name.toLowerCase();
    if (names.has(k)) return names.get(k) ?? name;
    if (shorts.has(k)) return shorts.get(k) ?? name;
    for (let dot = k.lastIndexOf('.'); dot > 0; dot = k.lastIndexOf('.', dot - 1)) {
      const short = k.slice(0, dot);
      if (names.has(short)) return names.get(short) ?? name;
    }
    return name;
  };
}

/** A group of names as said on each of them: the first five and how many more (a hostile directory's group of 100,000 is not said 100,000 times whole). */
export function twinsText(all: readonly string[], show: (name: string) => string = (n) => n, sep = ', '): string {
  const shown = all.slice(0, 5).map(show).join(sep);
  return all.length > 5 ? `${shown} and ${all.length - 5} more` : shown;
}
