// Generator: every file the gate reads, every link it follows, every directory it lists and every path it looks at on a real tree (the H200 capture; a generated 8-GPU HGX with RDMA, gres.conf, NVIDIA procfs, cooling devices and a slurmd; the same with a GPU without NUMA node; a GB300 Data Direct) made unreadable, empty, garbage, oversized, cut short, another function's config space or duplicated (a link, a listing, a look: unreadable), judged by the runner: a finding may only stay as it was or become a skip (or nothing be judged: could not tell).
import t, { type Test } from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { aerReferenceOf } from '../../src/checks/aer-judge.js';
import type { CheckContext } from '../../src/checks/types.js';
import { CHECK_IDS } from '../../src/checks/index.js';
import { Unreadable } from '../../src/errors.js';
import { runChecks } from '../../src/runner/run.js';
import { FsHost } from '../../src/host/fs-host.js';
import type { Host } from '../../src/host/host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { BaselineClass } from '../../src/model/baseline.js';
import type { Finding } from '../../src/model/finding.js';
import { captureFrom, hgx, P0 } from '../checks/_trees.js';
import { writeNvidiaGpus } from '../gen/nvidia-procfs.js';
import { allDevices, buildTree, limitsText } from '../gen/sysfs-tree.js';
import { node as GB300 } from '../gen/topologies/gb300-cx8-dma-direct.js';
import { H200 } from '../helpers/paths.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';
import { mulberry32 } from '../helpers/seeded.js';
import { type Case, MUTATIONS, MutatingHost, record, type Recorded, shapeOf } from './_mutate.js';

const SEED = Number(process.env['GDRGATE_FUZZ_SEED'] ?? 20261203);
/**
 * Cases per tree: one per (kind of file, mutation) — files of one shape (`/sys/bus/pci/devices/<bdf>/config`) share
 * a reader, so one of them, drawn with the seed, stands for the rest — plus EXTRA more drawn from every file. A count,
 * not a time budget: a loaded machine runs the same cases, only slower. GDRGATE_FUZZ_EXTRA=-1 runs every file × every mutation.
 */
const EXTRA = Number(process.env['GDRGATE_FUZZ_EXTRA'] ?? 20);
const NOW = new Date('2026-12-03T10:00:00Z');
const BEFORE = new Date('2026-12-03T09:00:00Z');

/** What a verdict is about: a pass, warn, fail or error must come back with the same key as the healthy run's, or become a skip. */
const key = (f: Finding): string => JSON.stringify([f.check, f.subject, f.code, f.status, f.expected ?? null]);

interface Tree {
  readonly name: string;
  readonly rec: Recorded;
  readonly baseline: BaselineClass;
  readonly ctx: Partial<CheckContext>;
  readonly healthy: { readonly bare: ReadonlySet<string>; readonly based: ReadonlySet<string> };
}

/** The runner's judgement; a node it refuses to judge (a device list unknown) has no finding to move: could not tell. */
function run(inv: Awaited<ReturnType<typeof buildInventory>>, baseline: BaselineClass | null, ctx: Partial<CheckContext>): Finding[] {
  try {
    return runChecks({ ...ctx, inv, baseline }, CHECK_IDS);
  } catch (e) {
    if (e instanceof Unreadable) return [];
    throw e;
  }
}

async function prepare(name: string, src: Host): Promise<Tree> {
  const rec = await record(src);
  const baseline = captureFrom(rec.inv);
  const ctx: Partial<CheckContext> = { aerHistory: { against: 'the previous Prolog', ref: aerReferenceOf(rec.inv, BEFORE, null), why: '' }, now: NOW };
  const healthy = { bare: new Set(run(rec.inv, null, ctx).map(key)), based: new Set(run(rec.inv, baseline, ctx).map(key)) };
  return { name, rec, baseline, ctx, healthy };
}

function put(root: string, kpath: string, text: string): void {
  mkdirSync(path.join(root, path.dirname(kpath)), { recursive: true });
  writeFileSync(path.join(root, kpath), text);
}

/**
 * The HGX tree with what job-placement and pcie-throttle read: NVIDIA procfs, the core topology, a right gres.conf,
 * cooling devices; a slurmd above the gate (memlock-limit walks up to it) with its pid file. `numaless`: GPU0 with
 * numa_node -1 and local CPUs on both sockets, as firmware without proximity data leaves it (its paths then hang on
 * the NUMA nodes' cpulists).
 */
async function hgxTree(numaless = false): Promise<string> {
  const root = scratchDir('gdrgate-broken-', TREE_TMP);
  const n = hgx();
  if (numaless) Object.assign(allDevices(n).find((d) => d.bdf === P0.gpu)!, { numaNode: -1 });
  await buildTree(root, n);
  put(root, 'proc/self/status', 'Name:\tnode\nState:\tR (running)\nPid:\t5151\nPPid:\t4242\n');
  put(root, 'proc/4242/comm', 'slurmd\n');
  put(root, 'proc/4242/status', 'Name:\tslurmd\nState:\tS (sleeping)\nPid:\t4242\nPPid:\t1\n');
  put(root, 'proc/4242/limits', limitsText('unlimited'));
  put(root, 'run/slurmd.pid', '4242\n');
  await writeNvidiaGpus(root, n);
  for (let c = 0; c < 192; c++) {
    const core = c % 96;
    put(root, `sys/devices/system/cpu/cpu${c}/topology/core_cpus_list`, `${core},${core + 96}\n`);
    put(root, `sys/devices/system/cpu/cpu${c}/topology/physical_package_id`, `${core < 48 ? 0 : 1}\n`);
  }
  const gpus = allDevices(n).filter((d) => d.kind === 'gpu').map((d) => d.bdf).sort();
  const socketOf = (bdf: string): number => n.hostBridges.find((h) => allDevices({ ...n, hostBridges: [h] }).some((d) => d.bdf === bdf))!.numaNode;
  put(root, 'etc/slurm/gres.conf', `AutoDetect=off\n${gpus.map((g, i) => `Name=gpu File=/dev/nvidia${i} Cores=${socketOf(g) === 0 ? '0-47' : '48-95'}`).join('\n')}\n`);
  for (const [i, [type, cur]] of ([['Processor', 0], [`PCIe_Port_Link_Speed_${P0.rp}`, 0], [`PCIe_Port_Link_Speed_${P0.downGpu}`, 0]] as const).entries()) {
    put(root, `sys/class/thermal/cooling_device${i}/type`, `${type}\n`);
    put(root, `sys/class/thermal/cooling_device${i}/cur_state`, `${cur}\n`);
    put(root, `sys/class/thermal/cooling_device${i}/max_state`, '3\n');
  }
  return root;
}

/** One case per (shape, mutation), then EXTRA drawn from every (file, mutation); all from the seed. A link, a look: unreadable; a listing: unlistable. */
function cases(rec: Recorded, seed: number): Case[] {
  const { files, links, stats, lists } = rec;
  const r = mulberry32(seed);
  const byShape = new Map<string, string[]>();
  for (const f of files) byShape.set(shapeOf(f), [...(byShape.get(shapeOf(f)) ?? []), f]);
  const out: Case[] = [];
  const all = EXTRA < 0;
  const one = (paths: readonly string[], kind: Case['kind']): void => {
    const groups = new Map<string, string[]>();
    for (const l of paths) groups.set(shapeOf(l), [...(groups.get(shapeOf(l)) ?? []), l]);
    for (const group of groups.values()) {
      if (all) for (const file of group) out.push({ file, kind, salt: out.length });
      else out.push({ file: group[Math.floor(r() * group.length)]!, kind, salt: out.length });
    }
  };
  one(links, 'unreadable');
  one(stats, 'unreadable');
  one(lists, 'unlistable');
  for (const group of byShape.values())
    for (const kind of MUTATIONS) {
      if (all) for (const file of group) out.push({ file, kind, salt: out.length });
      else out.push({ file: group[Math.floor(r() * group.length)]!, kind, salt: out.length });
    }
  for (let i = 0; i < EXTRA; i++) out.push({ file: files[Math.floor(r() * files.length)]!, kind: MUTATIONS[Math.floor(r() * MUTATIONS.length)]!, salt: out.length });
  return out;
}

function moved(healthy: ReadonlySet<string>, now: readonly Finding[]): string[] {
  return now
    .filter((f) => f.status !== 'skip' && !healthy.has(key(f)))
    .map((f) => `${f.status}: ${f.check} ${f.code} ${f.subject} (${f.expected ?? ''} / ${f.actual ?? ''}): ${f.message}`);
}

async function sweep(t: Test, tree: Tree): Promise<void> {
  const listing = new Map<string, string[]>();
  for (const d of tree.rec.lists) {
    const r = await tree.rec.host.list(d);
    listing.set(d, r.ok ? r.value : []);
  }
  const cs = cases(tree.rec, SEED + tree.rec.files.length);
  const bad: string[] = [];
  let ran = 0;
  for (const c of cs) {
    const host = new MutatingHost(tree.rec.host, c, tree.rec.lists, (d) => listing.get(d) ?? []);
    host.others = tree.rec.files.filter((f) => f.endsWith('/config'));
    if (!host.applies) continue;
    ran++;
    const inv = await buildInventory(host);
    for (const [label, baseline, healthy] of [['bare', null, tree.healthy.bare], ['based', tree.baseline, tree.healthy.based]] as const)
      for (const m of moved(healthy, run(inv, baseline, tree.ctx))) bad.push(`${c.kind} ${c.file} (${label}): ${m}`);
  }
  t.comment(`${tree.name}: ${tree.rec.files.length} files read, ${tree.rec.links.length} links followed, ${tree.rec.lists.length} directories listed, ${tree.rec.stats.length} paths looked at, ${ran} cases run (seed ${SEED}), cpu ${Math.round(process.cpuUsage().user / 1000)} ms so far`);
  t.strictSame(bad, [], `${tree.name}: no finding became a pass, warn or fail because a file broke (only skips, or as before)`);
}

t.test('the H200 capture (examples/h200-vm)', async (t) => {
  await sweep(t, await prepare('h200-vm', new FsHost(H200)));
});

t.test('a generated 8-GPU HGX with 8 ConnectX-7, gres.conf, NVIDIA procfs, PCIe cooling devices and a slurmd', async (t) => {
  await sweep(t, await prepare('hgx', new FsHost(await hgxTree())));
});

t.test('the same with GPU0 on no NUMA node (numa_node -1, local CPUs on both sockets)', async (t) => {
  await sweep(t, await prepare('hgx-numaless', new FsHost(await hgxTree(true))));
});

t.test('a generated GB300 with ConnectX-8 Data Direct (the Direct NIC ACS masks, the DMA functions\' IOMMU groups)', async (t) => {
  const root = scratchDir('gdrgate-broken-', TREE_TMP);
  await buildTree(root, structuredClone(GB300));
  await sweep(t, await prepare('gb300', new FsHost(root)));
});
