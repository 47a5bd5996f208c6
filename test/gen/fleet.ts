// Test-side generator: N node snapshots of one class (the 8-GPU/8-NIC HGX H100 tree of topologies/) and their
// sample spools, with faults injected on known nodes at known rates, seeded so that a failure replays.
// Each distinct tree (the clean one, and one per fault and target) is built and snapshotted once; every node is
// that snapshot with its own host name, so 1,000 nodes cost a few dozen trees.
import { promises as fsp } from 'node:fs';
import { TREE_TMP } from '../helpers/scratch.js';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { FsHost } from '../../src/host/fs-host.js';
import { makeSample, sampleLine, type ProbeRecipe } from '../../src/samples/sample.js';
import { buildSnapshot } from '../../src/snapshot/build.js';
import { seeded } from '../helpers/seeded.js';
import { allDevices, buildTree, type GenDevice, type GenNode } from './sysfs-tree.js';
import { node as hgx } from './topologies/sglang30401-hgx-h100.js';

export const FAULTS = ['link-x8', 'acs-redirect', 'firmware', 'missing-nic', 'weak-rail'] as const;
export type FaultKind = (typeof FAULTS)[number];

export interface Fault {
  readonly kind: FaultKind;
  /** The rail (0..7) it hits: GPU i and mlx5_i share a switch. */
  readonly rail: number;
  /** link-x8: the GPU or the NIC of the rail. */
  readonly end?: 'gpu' | 'nic';
}

export interface GenFleetNode {
  readonly name: string;
  readonly fault: Fault | null;
}

export interface FleetOptions {
  readonly n: number;
  readonly seed: number;
  /** Share of nodes with each fault (one fault per node at most); default DEFAULT_RATES. At least one node each. */
  readonly rates?: Partial<Record<FaultKind, number>>;
  /** Samples per path per node (default 5). */
  readonly samples?: number;
  /** Write the spools (default true). */
  readonly spools?: boolean;
}

export const DEFAULT_RATES: Readonly<Record<FaultKind, number>> = { 'link-x8': 0.03, 'acs-redirect': 0.02, firmware: 0.03, 'missing-nic': 0.02, 'weak-rail': 0.03 };

/**
 * When the generated inputs were taken: the last whole hour, an hour back, on this run's clock. Snapshots are stamped
 * then and each path's newest sample lies there, so a report judges them as current whatever day the tests run
 * (fleet report --max-age: 7 days by default).
 */
export const GEN_TIME = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;

export const RAILS = 8;
export const NOMINAL_GBPS = 392;
export const OTHER_FW = '28.40.1000';
/** ReqRedir + CmpltRedir + SrcValid: what a BIOS "ACS enable" leaves on a switch downstream port. */
export const ACS_REDIRECT = 0x000d;

export const RECIPE: ProbeRecipe = { tool: 'ib_write_bw', args: ['-d', 'mlx5_X', '--use_cuda', 'X', '-s', '1048576', '-D', '2', '--report_gbits'], msgSize: 1048576, iterations: null, durationS: 2, qps: 1, numaNode: null, direction: 'gpu->nic' };

export const nodeName = (i: number): string => `gpu${String(i + 1).padStart(4, '0')}`;
export const gpuBdf = (rail: number): string => allDevices(hgx).filter((d) => d.kind === 'gpu')[rail]!.bdf;

const clone = (n: GenNode): GenNode => structuredClone(n);

/** The HGX tree with one fault applied (weak-rail changes nothing in the tree: it lives in the samples). */
export function faultyTree(f: Fault | null): GenNode {
  const n = clone(hgx);
  if (!f || f.kind === 'weak-rail') return n;
  const devs = allDevices(n);
  const gpu = devs.filter((d) => d.kind === 'gpu')[f.rail]!;
  const nic = devs.filter((d) => d.kind === 'nic')[f.rail]!;
  const parentOf = (d: GenDevice): GenDevice => devs.find((p) => p.children?.includes(d))!;
  if (f.kind === 'link-x8') {
    const d = f.end === 'nic' ? nic : gpu;
    d.maxWidth = 16;
    d.width = 8;
  } else if (f.kind === 'acs-redirect') parentOf(gpu).acsCtl = ACS_REDIRECT;
  else if (f.kind === 'firmware') nic.ib = { ...nic.ib!, fwVer: OTHER_FW };
  else if (f.kind === 'missing-nic') parentOf(nic).children = [];
  return n;
}

export const variantKey = (f: Fault | null): string => (f === null || f.kind === 'weak-rail' ? 'clean' : `${f.kind}-${f.rail}-${f.end ?? ''}`);

/** The host name a template snapshot carries, replaced byte for byte by each node's (names are all this long). */
export const PLACEHOLDER = 'gpu0000';

/** One template archive per distinct tree, built once per process, with where its host name sits. */
const variants = new Map<string, Promise<{ tar: Uint8Array; at: number[] }>>();

async function variant(f: Fault | null): Promise<{ tar: Uint8Array; at: number[] }> {
  const key = variantKey(f);
  let v = variants.get(key);
  if (!v) {
    v = (async () => {
      const dir = await fsp.mkdtemp(path.join(TREE_TMP, `gdrgate-fleet-${key}-`));
      try {
        await buildTree(dir, { ...faultyTree(f), hostname: PLACEHOLDER });
        const snap = await buildSnapshot(new FsHost(dir), false, { commands: false, now: new Date(GEN_TIME) });
        const tar = gunzipSync(snap.gz);
        // The host name file and the manifest's host; a tar checksums headers only, so data can be patched in place.
        const at: number[] = [];
        for (let i = tar.indexOf(PLACEHOLDER); i >= 0; i = tar.indexOf(PLACEHOLDER, i + 1)) at.push(i);
        return { tar, at };
      } finally {
        await fsp.rm(dir, { recursive: true, force: true });
      }
    })();
    variants.set(key, v);
  }
  return v;
}

/** The template snapshot under this node's name. */
function named(t: { tar: Uint8Array; at: number[] }, name: string): Uint8Array {
  if (name.length !== PLACEHOLDER.length) throw new Error(`node names are ${PLACEHOLDER.length} characters here, not ${JSON.stringify(name)}`);
  const tar = Buffer.from(t.tar);
  for (const i of t.at) tar.write(name, i, 'latin1');
  return gzipSync(tar, { level: 1 });
}

/** Which nodes get which fault: round(rate·n) nodes each (at least one), distinct nodes, seeded. */
export function plan(o: FleetOptions): GenFleetNode[] {
  const r = seeded(o.seed);
  const rates = { ...DEFAULT_RATES, ...o.rates };
  const free = Array.from({ length: o.n }, (_, i) => i);
  const faults = new Map<number, Fault>();
  for (const kind of FAULTS) {
    const count = Math.max(rates[kind] > 0 ? 1 : 0, Math.round(rates[kind] * o.n));
    for (let k = 0; k < count && free.length > 0; k++) {
      const i = free.splice(r.int(free.length), 1)[0]!;
      faults.set(i, { kind, rail: r.int(RAILS), ...(kind === 'link-x8' ? { end: r.pick(['gpu', 'nic'] as const) } : {}) });
    }
  }
  return Array.from({ length: o.n }, (_, i) => ({ name: nodeName(i), fault: faults.get(i) ?? null }));
}

/** What the node's rail measures relative to nominal: a rail at x8 or a weak rail is well below its class. */
function railFactor(f: Fault | null, rail: number): number | null {
  if (!f || f.rail !== rail) return 1;
  if (f.kind === 'missing-nic') return null; // no adapter, no probe
  if (f.kind === 'link-x8') return 0.55;
  if (f.kind === 'weak-rail') return 0.7;
  return 1;
}

export function spoolText(node: GenFleetNode, seed: number, perPath: number): string {
  const r = seeded((seed ^ (Number(node.name.slice(3)) * 2654435761)) >>> 0 || 1);
  const lines: string[] = [];
  // Hourly, the newest at GEN_TIME (plus a second per rail).
  const t0 = GEN_TIME - (perPath - 1) * 3_600_000;
  for (let rail = 0; rail < RAILS; rail++) {
    const f = railFactor(node.fault, rail);
    if (f === null) continue;
    const nic = `mlx5_${rail}`;
    const recipe = { ...RECIPE, args: RECIPE.args.map((a) => (a === 'mlx5_X' ? nic : a === 'X' ? String(rail) : a)) };
    for (let k = 0; k < perPath; k++) {
      // ±1.5 % around the node's own level, itself within ±1 % of nominal: a healthy fleet's spread.
      const value = Math.round(NOMINAL_GBPS * f * (1 + (r.int(2001) - 1000) / 100_000) * (1 + (r.int(3001) - 1500) / 100_000) * 100) / 100;
      const s = makeSample({ ts: t0 + k * 3_600_000 + rail * 1000, node: node.name, job: String(1000 + k), probe: 'ib-write-gpu', recipe, gpu: gpuBdf(rail), nic, bytes: 1048576, value, unit: 'Gb/s' });
      const line = sampleLine(s);
      if (line) lines.push(line.endsWith('\n') ? line.slice(0, -1) : line);
    }
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/** Writes `<node>.tar.gz` and `<node>.samples.jsonl` for every node into dir; returns the plan. */
export async function generateFleet(dir: string, o: FleetOptions): Promise<GenFleetNode[]> {
  const nodes = plan(o);
  await fsp.mkdir(dir, { recursive: true });
  for (const node of nodes) {
    await fsp.writeFile(path.join(dir, `${node.name}.tar.gz`), named(await variant(node.fault), node.name));
    if (o.spools !== false) await fsp.writeFile(path.join(dir, `${node.name}.samples.jsonl`), spoolText(node, o.seed, o.samples ?? 5));
  }
  return nodes;
}
