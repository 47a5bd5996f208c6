// Test-side generator of a realistic fleet: the nodes of generateFleet's plan (fleet.ts: the HGX H100 tree of
// topologies/, faults at known rates, the same spools) where no two snapshots are alike, as on real machines:
// each node has its own adapter GUIDs (node_guid, derived from the adapter's serial), its own correctable-error
// history (aer_dev_correctable and aer_rootport_total_err_cor counts, AER Correctable Error Status bits, Device
// Status CorrErr), and its own link history (Link Status bandwidth-management bits set by a retrain on some ports).
// None of that is a fault: the fleet report must flag none of it. Each distinct tree is built and snapshotted
// once; every node is that snapshot with its files rewritten by the generator's own writers (configSpace,
// aerFiles), packed again with the gate's tar writer. `summaries`: each node's summary as the node-side code writes
// it (src/fleet/summary-write.ts) from that node's snapshot. Nothing a node has of its own is a compared fact, so
// its summary is its tree's first node's with its name, host and digest: `verifyEvery` (default 1, every node)
// says how often the summary is also computed from the node's own snapshot, and a difference is an error.
import { promises as fsp } from 'node:fs';
import { TREE_TMP } from '../helpers/scratch.js';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { writeSummary } from '../../src/fleet/summary-write.js';
import { sha256, summaryName, type NodeSummary } from '../../src/fleet/summary.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildSnapshot } from '../../src/snapshot/build.js';
import { readTar, scanTar, writeTar, type TarEntry } from '../../src/snapshot/tar.js';
import { seeded, type Seeded } from '../helpers/seeded.js';
import { faultyTree, GEN_TIME, PLACEHOLDER, plan, spoolText, variantKey, type Fault, type FleetOptions, type GenFleetNode } from './fleet.js';
import { aerFiles } from './pci-regs-gen.js';
import { allDevices, buildTree, configSpace, type GenDevice, type GenNode } from './sysfs-tree.js';

export interface RealFleetOptions extends FleetOptions {
  /** Write each node's summary beside its snapshot (default false). */
  readonly summaries?: boolean;
  /** Compute every n-th node's summary from its snapshot (the others derived from their tree's first); default 1. */
  readonly verifyEvery?: number;
}

interface Template {
  readonly model: GenNode;
  readonly entries: readonly TarEntry[];
  /** Each entry as the gate's tar writer writes it (headers and padded data): a node's archive is these, a few replaced. */
  readonly chunks: readonly Uint8Array[];
  /** Entry index by path. */
  readonly at: ReadonlyMap<string, number>;
  /** Per device: the directory its files are under in the archive. */
  readonly dirOf: ReadonlyMap<string, string>;
  /** Per adapter name: its node_guid file. */
  readonly guidOf: ReadonlyMap<string, string>;
  /** Entries holding the placeholder host name. */
  readonly named: readonly number[];
  /** The devices recorded in full (on a GPU↔NIC path): the ones whose files a node's history rewrites. */
  readonly full: readonly GenDevice[];
}

const templates = new Map<string, Promise<Template>>();

async function template(f: Fault | null): Promise<Template> {
  const key = variantKey(f);
  let t = templates.get(key);
  if (!t) {
    t = (async () => {
      const dir = await fsp.mkdtemp(path.join(TREE_TMP, `gdrgate-realfleet-${key}-`));
      try {
        const model = { ...faultyTree(f), hostname: PLACEHOLDER };
        await buildTree(dir, model);
        const snap = await buildSnapshot(new FsHost(dir), false, { commands: false, now: new Date(GEN_TIME) });
        const entries = readTar(gunzipSync(snap.gz));
        const at = new Map(entries.map((e, i) => [e.path, i]));
        const dirOf = new Map<string, string>();
        const guidOf = new Map<string, string>();
        const ph = Buffer.from(PLACEHOLDER);
        const named: number[] = [];
        entries.forEach((e, i) => {
          if (e.kind !== 'file') return;
          const m = /^(.*\/([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]))\/config$/.exec(e.path);
          if (m) dirOf.set(m[2]!, m[1]!);
          const g = /\/infiniband\/([^/]+)\/node_guid$/.exec(e.path);
          if (g) guidOf.set(g[1]!, e.path);
          if (e.data && Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength).includes(ph)) named.push(i);
        });
        // A snapshot records config space in full only for the devices on a GPU↔NIC path (the others' header only);
        // there the archive's bytes are the generator's own, so rewriting them changes only what a node's history does.
        const full = allDevices(model).filter((d) => {
          const cfg = entries[at.get(`${dirOf.get(d.bdf)}/config`) ?? -1]?.data;
          return cfg !== undefined && cfg.length === 4096 && Buffer.from(cfg).equals(configSpace(d));
        });
        if (full.length < 24) throw new Error(`fleet-real: only ${full.length} devices recorded in full in the ${key} snapshot`);
        return { model, entries, chunks: entries.map(entryBytes), at, dirOf, guidOf, named, full };
      } finally {
        await fsp.rm(dir, { recursive: true, force: true });
      }
    })();
    templates.set(key, t);
  }
  return t;
}

/** One entry as writeTar writes it, without the end-of-archive blocks: its headers, then its data padded to 512. */
function entryBytes(e: TarEntry): Uint8Array {
  const tar = writeTar([e]);
  let end = -1;
  scanTar(tar, 4, (v) => void (v.kind === 'file' && (end = Math.ceil(v.end / 512) * 512)));
  if (end < 0) for (end = 0; tar.subarray(end, end + 512).some((b) => b !== 0); end += 512);
  return tar.subarray(0, end);
}

/** The archive of these entries' bytes: writeTar's own trailer (two zero blocks, then zeros to a 10 KiB record). */
function archive(chunks: readonly Uint8Array[]): Buffer {
  const body = chunks.reduce((n, c) => n + c.length, 0) + 1024;
  return Buffer.concat([...chunks, Buffer.alloc(Math.ceil(body / 10240) * 10240 - body + 1024)]);
}

/** PCIe cap (ID 0x10) offset in a config space, walking the list from 0x34. */
function pcieCap(b: Buffer): number {
  for (let at = b[0x34]!, n = 0; at !== 0 && n < 48; at = b[at + 1]!, n++) if (b[at] === 0x10) return at;
  throw new Error('fleet-real: no PCI Express capability');
}

/** Correctable error bits (AER §7.8.4.5) a healthy fleet's links show now and then. */
const COR_BITS = [0, 6, 7, 12] as const;

/** One device's files as this node has them: its own error history and, on some ports, a past retrain. */
function deviceFiles(d: GenDevice, r: Seeded, files: Map<string, Uint8Array>, dir: string): void {
  const errs = r.int(100) < 35;
  const retrained = d.kind !== 'gpu' && d.kind !== 'nic' && r.int(100) < 10;
  if (!errs && !retrained && d.kind !== 'rootport') return;
  const cor: Record<number, number> = {};
  if (errs) for (const bit of COR_BITS) if (r.int(3) === 0) cor[bit] = 1 + r.int(bit === 0 ? 400 : 12);
  const bits = Object.keys(cor).reduce((m, b) => m | (1 << Number(b)), 0);
  const rootport = d.kind === 'rootport' ? { cor: r.int(4) === 0 ? 1 + r.int(50) : 0, nonfatal: 0, fatal: 0 } : undefined;
  const mine: GenDevice = { ...d, aer: { ...d.aer, ceSta: bits }, aerCounters: { ...d.aerCounters, cor, ...(rootport ? { rootport } : {}) } };
  const cfg = configSpace(mine);
  const pcie = pcieCap(cfg);
  if (bits) cfg.writeUInt16LE(cfg.readUInt16LE(pcie + 0x0a) | 0x0001, pcie + 0x0a); // Device Status: CorrErr detected
  if (retrained) cfg.writeUInt16LE(cfg.readUInt16LE(pcie + 0x12) | (r.int(2) ? 0x4000 : 0xc000), pcie + 0x12); // LnkSta BWMgmt+ (ABWMgmt+)
  files.set(`${dir}/config`, cfg);
  for (const [name, text] of Object.entries(aerFiles(mine, d.kind === 'rootport'))) if (name === 'aer_dev_correctable' || name === 'aer_rootport_total_err_cor') files.set(`${dir}/${name}`, Buffer.from(text));
}

/** The template archive as node `i` (named `name`) has it, gzipped. */
export async function realSnapshot(f: Fault | null, name: string, i: number, seed: number): Promise<Uint8Array> {
  const t = await template(f);
  const r = seeded(((seed * 2654435761) ^ (i + 1) * 40503) >>> 0 || 1);
  const files = new Map<string, Uint8Array>();
  for (const d of t.full) deviceFiles(d, r, files, t.dirOf.get(d.bdf)!);
  // node_guid as mlx5 derives it from the adapter's own identity: unique per adapter, so per node.
  [...t.guidOf].forEach(([, file], k) => {
    const g = (0x00a4_0000 + i * 16 + k).toString(16).padStart(8, '0');
    files.set(file, Buffer.from(`b83f:d203:${g.slice(0, 4)}:${g.slice(4)}\n`));
  });
  const chunks = t.chunks.slice();
  for (const [p, data] of files) {
    const k = t.at.get(p);
    if (k === undefined) throw new Error(`fleet-real: ${p} is not in the snapshot`);
    chunks[k] = entryBytes({ ...t.entries[k]!, data });
  }
  for (const k of t.named) chunks[k] = entryBytes({ ...t.entries[k]!, data: Buffer.from(Buffer.from(t.entries[k]!.data!).toString('latin1').replaceAll(PLACEHOLDER, name), 'latin1') });
  return gzipSync(archive(chunks), { level: 1 });
}

/** Writes `<node>.tar.gz`, `<node>.samples.jsonl` and (with `summaries`) `<node>.summary.json` per node; returns the plan. */
export async function generateRealFleet(dir: string, o: RealFleetOptions): Promise<GenFleetNode[]> {
  const nodes = plan(o);
  await fsp.mkdir(dir, { recursive: true });
  const firsts = new Map<string, NodeSummary>();
  const every = Math.max(1, o.verifyEvery ?? 1);
  for (const [i, node] of nodes.entries()) {
    const file = path.join(dir, `${node.name}.tar.gz`);
    const gz = await realSnapshot(node.fault, node.name, i, o.seed);
    await fsp.writeFile(file, gz);
    if (o.summaries) {
      const tree = variantKey(node.fault);
      const first = firsts.get(tree);
      const derived = first ? JSON.stringify({ ...first, node: node.name, hostname: node.name, snapshot: { ...first.snapshot, file: path.basename(file), bytes: gz.length, sha256: sha256(gz) } }) + '\n' : null;
      if (derived === null || i % every === 0) {
        const out = await writeSummary(node.name, file, gz, { sync: false });
        const text = await fsp.readFile(out, 'utf8');
        if (derived === null) firsts.set(tree, JSON.parse(text) as NodeSummary);
        else if (text !== derived) throw new Error(`fleet-real: ${node.name}'s summary from its snapshot is not its tree's first node's (a node's own file became a compared fact)`);
      } else await fsp.writeFile(path.join(dir, summaryName(node.name)), derived);
    }
    if (o.spools !== false) await fsp.writeFile(path.join(dir, `${node.name}.samples.jsonl`), spoolText(node, o.seed, o.samples ?? 5));
  }
  return nodes;
}
