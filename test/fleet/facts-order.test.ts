// The class facts and the verdicts depend on what the nodes hold, never on their order or their names: random classes
// of generated HGX H100 nodes, each node clean or with differences compare knows, judged under one set of names and
// again permuted and renamed, give the same facts and verdicts up to the renaming (seeded: a failure names its seed).
import t from 'tap';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { compareViewsBothWays } from '../../src/compare/compare.js';
import { compareView, type CompareView } from '../../src/compare/view.js';
import { readNode } from '../../src/engine/evaluate.js';
import { viewKey } from '../../src/fleet/digest.js';
import { classFacts, type ClassFacts, type ClassNode } from '../../src/fleet/facts.js';
import { buildFleetReport } from '../../src/fleet/report.js';
import type { NodePathStat } from '../../src/fleet/types.js';
import { seeded, type Seeded } from '../helpers/seeded.js';
import { faultyTree, gpuBdf, NOMINAL_GBPS } from '../gen/fleet.js';
import { allDevices, buildTree, type GenNode } from '../gen/sysfs-tree.js';

/** The switch port above GPU 0 (rail 0) and that GPU. */
const PORT = '0000:17:00.0';

type Perturb = (tree: GenNode) => { cooling?: number };

/** One kind of difference compare knows each, on the HGX H100 tree (test/gen/topologies/sglang30401-hgx-h100.ts). */
const KINDS: Readonly<Record<string, { readonly fault?: Parameters<typeof faultyTree>[0]; readonly change?: Perturb }>> = {
  'gpu0-x8': { fault: { kind: 'link-x8', rail: 0, end: 'gpu' } },
  'nic2-x8': { fault: { kind: 'link-x8', rail: 2, end: 'nic' } },
  'acs-redirect-2': { fault: { kind: 'acs-redirect', rail: 2 } },
  'firmware-5': { fault: { kind: 'firmware', rail: 5 } },
  'missing-nic-4': { fault: { kind: 'missing-nic', rail: 4 } },
  // The same adapter answering at function 1 of its bus, under its old name: moved, one fact with missing-nic-4.
  'moved-nic-4': { change: (n) => ((allDevices(n).find((d) => d.bdf === '0000:9b:00.0')!.bdf = '0000:9b:00.1'), {}) },
  // The port throttled by its cooling device (Target Link Speed Gen4), or only trained slower: one fact, two parts.
  'port-throttled': { change: (n) => (slow(n, 16), { cooling: 1 }) },
  'port-slower': { change: (n) => (slow(n, 32), {}) },
  driver: { change: (n) => ((n.driver = { version: '570.124.06', open: true }), {}) },
  kernel: { change: (n) => ((n.kernel = '5.15.0-140-generic'), {}) },
  memlock: { change: (n) => ((n.memlockKiB = 65536), {}) },
  'iommu-dma': { change: (n) => ((n.iommu = { ...n.iommu!, groupType: 'DMA-FQ' }), {}) },
  // mlx5_4's MaxReadReq lowered, or its MaxPayload above its port's: one fact, told either way.
  'nic4-mrrs': { change: (n) => ((allDevices(n).find((d) => d.bdf === '0000:9b:00.0')!.mrrs = 512), {}) },
  'nic4-mps': { change: (n) => ((allDevices(n).find((d) => d.bdf === '0000:9b:00.0')!.mps = 512), {}) },
  // ib_uverbs caught loading (could not tell) or not loaded: one fact, told either way.
  'uverbs-loading': { change: (n) => ((n.moduleStates = { ib_uverbs: 'Loading' }), {}) },
  'uverbs-absent': { change: (n) => ((n.modules = ['nvidia_uvm', 'nvidia_modeset', 'nvidia', 'mlx5_ib', 'ib_core', 'mlx5_core']), {}) },
  'gpu3-numa': { change: (n) => ((allDevices(n).filter((d) => d.kind === 'gpu')[3]!.numaNode = 1), {}) },
};

function slow(n: GenNode, target: number): void {
  const dsp = allDevices(n).find((d) => d.bdf === PORT)!;
  Object.assign(dsp, { maxSpeed: 32, speed: 16, targetSpeed: target });
  Object.assign(dsp.children![0]!, { maxSpeed: 32, speed: 16 });
}

/** A node's tree with these kinds applied (one tree fault at most, then the changes), read as the fleet reads it. */
async function variantView(dir: string, kinds: readonly string[]): Promise<CompareView> {
  const fault = kinds.map((k) => KINDS[k]!.fault).find((f) => f !== undefined) ?? null;
  const tree = faultyTree(fault);
  let cooling = 0;
  for (const k of kinds) cooling = KINDS[k]!.change?.(tree).cooling ?? cooling;
  const root = path.join(dir, kinds.join('+') || 'clean');
  await buildTree(root, { ...tree, hostname: 'gpu0000' });
  // /sys/class/thermal/cooling_device0 as drivers/thermal/pcie_cooling.c makes it for the port.
  const cd = path.join(root, 'sys/class/thermal/cooling_device0');
  await fsp.mkdir(cd, { recursive: true });
  for (const [f, v] of Object.entries({ type: `PCIe_Port_Link_Speed_${PORT}`, cur_state: `${cooling}`, max_state: '3' })) await fsp.writeFile(path.join(cd, f), `${v}\n`);
  return compareView((await readNode({ root, baseline: null, node: 'gpu0000', trust: [] })).inv);
}

/** Node names of several shapes (the natural order sorts digit runs as numbers): a renaming reorders them. */
function names(r: Seeded, n: number): string[] {
  const out = new Set<string>();
  while (out.size < n) out.add(r.pick([`gpu${r.int(10000)}`, `n${r.int(40)}-${r.int(40)}`, `${r.join(['a', 'b', 'z'], 3)}${r.int(9)}`]));
  return [...out];
}

/** What the facts say, node names mapped (`as`), in an order that names do not decide. */
function facts(f: ClassFacts, as: (n: string) => string, keyOf: (n: string) => string): unknown {
  const byName = (x: { node: string }, y: { node: string }): number => (x.node < y.node ? -1 : x.node > y.node ? 1 : 0);
  return {
    reference: f.reference === null ? null : keyOf(f.reference),
    facts: f.facts.map((x) => ({ ...x, deviations: x.deviations.map((d) => ({ ...d, node: as(d.node) })).sort(byName) })),
    byNode: [...f.byNode].map(([node, ds]) => ({ node: as(node), ds })).sort(byName),
  };
}

t.test('permuting and renaming a class\'s nodes changes its facts and verdicts only by the renaming', async (t) => {
  const dir = t.testdir();
  const pool: [string, CompareView][] = [];
  const sets = [[], ...Object.keys(KINDS).map((k) => [k]), ['port-throttled', 'gpu0-x8'], ['port-slower', 'firmware-5'], ['missing-nic-4', 'memlock'], ['driver', 'kernel']];
  for (const kinds of sets) pool.push([kinds.join('+') || 'clean', await variantView(dir, kinds)]);
  const named = new Map(pool.map(([k, v]) => [viewKey(v), k]));
  t.equal(named.size, pool.length, 'every variant holds a view of its own');
  // Nodes alike never differ: a difference between a node and its twin would flag whichever the class takes as its reference.
  t.same(pool.map(([k, v]) => [k, compareViewsBothWays(v, structuredClone(v))]), pool.map(([k]) => [k, { differences: [], onReference: [] }]), 'each variant against itself: nothing');
  const seen = { ties: 0, parts: 0, moreTied: 0, rails: 0 };
  for (let seed = 1; seed <= 300; seed++) {
    const r = seeded(seed);
    // A few variants per class, the clean tree likelier, every other class's from the port's: majorities, ties (of
    // two values and of three) and facts of two parts all come up.
    const from = r.int(2) === 0 ? pool : pool.filter(([k]) => k.includes('port-'));
    const few = Array.from({ length: 1 + r.int(3) }, () => r.pick(from));
    const size = 2 + r.int(8);
    const views = Array.from({ length: size }, () => (r.int(3) === 0 ? pool[0]! : r.pick(few)));
    const keyed = r.int(2) === 0;
    // Each node's rails as its epilog measured them: most at the class's figure, some weak, some not measured.
    const rails = views.map(() => (r.int(6) === 0 ? [] : Array.from({ length: 8 }, (_, rail) => ({ rail, p50: r.int(12) === 0 ? null : NOMINAL_GBPS * 1.25e8 * (r.int(10) === 0 ? 0.7 : 0.99 + r.int(200) / 10000) })).filter((x) => x.p50 !== null)));
    const before = names(r, size);
    const after = names(r, size + 3).slice(3);
    const rename = new Map(before.map((n, i) => [n, after[i]!]));
    const make = (ns: readonly string[]): ClassNode[] => views.map(([, view], i) => ({ node: ns[i]!, view, ...(keyed ? { key: viewKey(view) } : {}) }));
    const statsOf = (ns: readonly string[]): NodePathStat[] =>
      rails.flatMap((xs, i) => xs.map(({ rail, p50 }) => ({ node: ns[i]!, probe: 'ib-write-gpu', recipeHash: 'r', gpu: gpuBdf(rail), nic: `mlx5_${rail}`, direction: 'gpu->nic', p50: p50!, min: null, count: 5, source: 'spool' })));
    const one = make(before);
    const two = make(after);
    const figures = new Map([[one, statsOf(before)], [two, statsOf(after)]]);
    // The second class and its figures in another order: a seeded shuffle.
    const shuffle = <T>(xs: T[]): void => {
      for (let i = xs.length - 1; i > 0; i--) {
        const j = r.int(i + 1);
        [xs[i], xs[j]] = [xs[j]!, xs[i]!];
      }
    };
    shuffle(two);
    shuffle(figures.get(two)!);
    // The reference as what it holds: of nodes alike, any one is the reference the others would be.
    const variantOf = (ns: ClassNode[]) => (n: string): string => named.get(viewKey(ns.find((x) => x.node === n)!.view))!;
    const cf = classFacts(one);
    seen.ties += cf.facts.some((x) => x.tie) ? 1 : 0;
    seen.parts += cf.facts.some((x) => x.majority.includes('; ')) ? 1 : 0;
    seen.moreTied += cf.facts.some((x) => x.tie && new Set(x.deviations.map((d) => d.value)).size > 1) ? 1 : 0;
    const got = facts(cf, (n) => rename.get(n)!, variantOf(one));
    const want = facts(classFacts(two), (n) => n, variantOf(two));
    const byName = (x: { node: string }, y: { node: string }): number => (x.node < y.node ? -1 : 1);
    const report = (ns: ClassNode[], as: (n: string) => string) => {
      const rep = buildFleetReport({ dir: 'fleet', nodes: ns, classOf: () => 'hgx', stats: figures.get(ns)!, missing: [], problems: [] });
      seen.rails += rep.nodes.some((v) => v.rails.length > 0) ? 1 : 0;
      return {
        nodes: rep.nodes.map((v) => ({ node: as(v.node), status: v.status, worst: v.worst, differences: v.differences, rails: v.rails, notes: v.notes })).sort(byName),
        paths: rep.classes[0]!.paths.map((p) => ({ ...p, points: p.points.map((x) => ({ ...x, node: as(x.node) })).sort(byName), absent: p.absent.map(as).sort() })),
      };
    };
    const same = t.same(got, want, `seed ${seed}: the facts`) && t.same(report(one, (n) => rename.get(n)!), report(two, (n) => n), `seed ${seed}: the verdicts`);
    if (!same) {
      t.comment(`seed ${seed}: ${views.map(([k], i) => `${before[i]}→${after[i]}=${k} (${rails[i]!.length} rails)`).join(', ')}`);
      break;
    }
  }
  // What the classes held, so that the property is tried where it can fail: ties, facts of two parts, ties beside a
  // third value, rails below their band or absent.
  t.same(Object.values(seen).map((n) => n > 0), [true, true, true, true], JSON.stringify(seen));
});

// Three values of one fact held by two nodes each: the note on each node listed the values after the reference's in
// the order of the nodes holding them by name, so renaming the nodes reworded every note.
t.test('a fact tied three ways says its values in one order whatever the nodes are called', async (t) => {
  const dir = t.testdir();
  const [clean, slower, throttled] = [await variantView(dir, []), await variantView(dir, ['port-slower']), await variantView(dir, ['port-throttled'])];
  // The reference is one of the four nodes of the slower port's fingerprint (GPU 0 at Gen4), the least view key.
  const first = viewKey(slower) < viewKey(throttled) ? 'not throttled; Gen4 x16' : 'throttled, state 1; Gen4 x16';
  const rest = ['not throttled; Gen4 x16', 'not throttled; Gen5 x16', 'throttled, state 1; Gen4 x16'].filter((v) => v !== first).sort();
  const note = `no majority on link-speed ${PORT}: ${[first, ...rest].map((v) => `${v} on 2`).join(', ')} of 6: not judged`;
  for (const order of [['a1', 'a2', 'a3'], ['a3', 'a2', 'a1'], ['a2', 'a1', 'a3']]) {
    const nodes = [clean, slower, throttled].flatMap((view, i) => [{ node: `${order[i]}x`, view }, { node: `${order[i]}y`, view }]);
    const r = buildFleetReport({ dir: 'fleet', nodes, classOf: () => 'hgx', stats: [], missing: [], problems: [] });
    t.same(r.nodes.map((v) => v.notes), [[note], [note], [note], [note], [note], [note]], `clean on ${order[0]}, slower on ${order[1]}, throttled on ${order[2]}`);
  }
});
