// Builds a snapshot through a Host: what the inventory read, the documented extras, /dev, ticket commands, a manifest.
import { nul } from '../model/fact.js';
import { gzipSync } from 'node:zlib';
import type { Exec } from '../host/exec.js';
import type { Host } from '../host/host.js';
import { buildInventory } from '../inventory/build.js';
import { VERSION } from '../version.js';
import { Copier, pool } from './collect.js';
import { listDev, runCommands, type CommandRecord, type DevNode } from './commands.js';
import { allowed, extraRequests } from './extras.js';
import { MemoHost } from './memo.js';
import { MAX_ENTRIES, MAX_TAR_BYTES } from './limits.js';
import { SnapshotError } from './open.js';
import { SnapTree } from './tree.js';


export interface SnapshotOptions {
  /** Run the ticket commands (only ever on a live root). */
  readonly commands: boolean;
  readonly exec?: Exec;
  readonly now?: Date;
  readonly uid?: number | null;
  readonly slurmdPidFiles?: readonly string[];
}

export interface Manifest {
  readonly tool: 'gdrgate';
  readonly kind: 'snapshot';
  readonly format: 1;
  readonly version: string;
  readonly host: string | null;
  readonly time: string;
  readonly uid: number | null;
  readonly root: string;
  readonly live: boolean;
  readonly counts: Readonly<Record<'files' | 'dirs' | 'links' | 'bytes' | 'requests' | 'pciDevices' | 'pathDevices' | 'gpus' | 'nics', number>>;
  /** Paths the checks asked for that do not exist on the node (optional files: peer-memory, slurmd, …). */
  readonly missing: readonly string[];
  /** Directories whose listing was recorded (their real path): a listing not here is unknown on replay, never empty. */
  readonly listed: readonly string[];
  readonly unreadable: readonly { readonly path: string; readonly reason: string }[];
  readonly skipped: readonly { readonly path: string; readonly reason: string }[];
  readonly dev: readonly DevNode[];
  readonly commands: readonly CommandRecord[];
  readonly notes: readonly string[];
}

export interface Snapshot {
  readonly manifest: Manifest;
  readonly gz: Uint8Array;
  readonly tarBytes: number;
}

const CONCURRENCY = 32;
const enc = new TextEncoder();

/** A capture (not a live node) may carry command outputs of its own (capture/): they travel with it. */
async function carryCapture(host: Host, tree: SnapTree): Promise<void> {
  const walk = async (dir: string, depth: number): Promise<void> => {
    const ls = await host.list(dir);
    if (!ls.ok) return;
    for (const n of ls.value) {
      const st = await host.lstat(`${dir}/${n}`);
      if (st.ok && st.value.kind === 'dir' && depth > 0) await walk(`${dir}/${n}`, depth - 1);
      if (!st.ok || st.value.kind !== 'file') continue;
      const r = await host.readBytes(`${dir}/${n}`, 16 << 20);
      if (r.ok) tree.put(`${dir}/${n}`, { kind: 'file', mode: 0o644, data: r.value });
    }
  };
  await walk('/capture', 1);
}

const KIND: Record<number, string> = { 0o020000: 'char', 0o040000: 'dir', 0o060000: 'block', 0o100000: 'file', 0o120000: 'link' };

/** [major, minor] as listDev and capture-node.py write it, or null (not a device). */
const isRdev = (r: unknown): r is readonly [number, number] | null => r === null || (Array.isArray(r) && r.length === 2 && r.every((x) => Number.isInteger(x) && x >= 0 && x < 2 ** 32));
type Obj = Readonly<Record<string, unknown>>;
const isObj = (e: unknown): e is Obj => typeof e === 'object' && e !== null;
const devPath = (p: unknown): p is string => typeof p === 'string' && p.startsWith('/dev/');

/**
 * The /dev listing of a capture: from its own manifest (a snapshot of a snapshot keeps it), else from the
 * capture-node.py listing (capture/dev.json: full st_mode in octal, rdev as [major, minor]). Both are the capture's
 * to say, as untrusted as the rest of it: an entry of another shape is left out (a null one ended the snapshot on a
 * TypeError), never taken as it is.
 */
async function priorDev(host: Host): Promise<DevNode[]> {
  const parse = async (p: string): Promise<unknown> => {
    const r = await host.readText(p);
    try {
      return r.ok ? (JSON.parse(r.value) as unknown) : null;
    } catch {
      return null;
    }
  };
  const m = await parse('/manifest.json');
  const dev = isObj(m) ? m.dev : undefined;
  if (Array.isArray(dev))
    return dev.filter(isObj).flatMap((e) => (devPath(e.path) && typeof e.kind === 'string' && typeof e.mode === 'string' && /^[0-7]{4}$/.test(e.mode) && isRdev(e.rdev) ? [{ path: e.path, kind: e.kind, mode: e.mode, rdev: e.rdev }] : []));
  const d = await parse('/capture/dev.json');
  if (!Array.isArray(d)) return [];
  return d.filter(isObj).flatMap((e) => {
    if (!devPath(e.path) || typeof e.mode !== 'string' || !/^0o[0-7]{1,7}$/.test(e.mode) || !isRdev(e.rdev)) return [];
    const mode = Number(e.mode);
    return [{ path: e.path, kind: KIND[mode & 0o170000] ?? 'other', mode: (mode & 0o7777).toString(8).padStart(4, '0'), rdev: e.rdev }];
  });
}

/**
 * The inventory runs once on a recording Host; what it read is copied exactly (links as links), then the extras
 * of extras.ts, the /dev listing, and on a live node the ticket commands, all packed with a manifest.
 */
export async function buildSnapshot(src: Host, live: boolean, o: SnapshotOptions): Promise<Snapshot> {
  const now = o.now ?? new Date();
  const memo = new MemoHost(src);
  const inv = await buildInventory(memo, o.slurmdPidFiles ? { slurmdPidFiles: o.slurmdPidFiles } : {});
  memo.recording = false;
  const recorded = [...memo.requests];
  const tree = new SnapTree();
  const copier = new Copier(memo, tree, allowed);
  const extras = await extraRequests(memo, inv);
  await pool([...recorded, ...extras], CONCURRENCY, (r) => copier.copy(r));
  const missing: string[] = [];
  for (const r of recorded) {
    const a = await memo.answer(r);
    if (!a.ok && a.missing && !missing.includes(r.path)) missing.push(r.path);
  }
  const notes: string[] = [];
  let dev = await listDev(memo);
  if (!live) {
    await carryCapture(memo, tree);
    if (dev.length === 0) dev = await priorDev(memo);
  }
  let commands: CommandRecord[] = [];
  if (live && o.commands && o.exec) {
    const outs = await runCommands(memo, o.exec);
    for (const c of outs) for (const [name, text] of c.files) tree.put(`/capture/cmd/${name}`, { kind: 'file', mode: 0o644, data: enc.encode(text) });
    commands = outs.map((c) => c.record);
  } else notes.push(live ? 'commands not run (--no-commands)' : 'commands not run: not a live root (a capture keeps its own capture/ directory)');
  const counts = { files: 0, dirs: 0, links: 0, bytes: 0 };
  // capture/ (carried from a capture, or the commands' outputs) is put whole: its listings are the snapshot's own.
  const listed = new Set(copier.listed);
  for (const [p, n] of tree.walk()) {
    if (n.kind === 'dir' && (p === '/capture' || p.startsWith('/capture/'))) listed.add(p);
    if (n.kind === 'file') {
      counts.files++;
      counts.bytes += n.data.length;
    } else if (n.kind === 'dir') counts.dirs++;
    else counts.links++;
  }
  const pciList = await memo.list('/sys/bus/pci/devices');
  const manifest: Manifest = {
    tool: 'gdrgate',
    kind: 'snapshot',
    format: 1,
    version: VERSION,
    host: nul(inv.hostname),
    time: now.toISOString(),
    uid: o.uid ?? null,
    root: src.root,
    live,
    counts: { ...counts, requests: recorded.length + extras.length, pciDevices: pciList.ok ? pciList.value.length : 0, pathDevices: inv.pci.size, gpus: inv.gpus.length, nics: inv.nics.length },
    missing: missing.sort(),
    listed: [...listed].sort(),
    unreadable: [...copier.problems.unreadable].sort().map(([path, reason]) => ({ path, reason })),
    skipped: [...copier.problems.skipped].sort().map(([path, reason]) => ({ path, reason })),
    dev,
    commands,
    notes: [...notes, ...inv.notes],
  };
  const mtime = Math.floor(now.getTime() / 1000);
  const tar = tree.toTar(mtime, [{ path: 'manifest.json', kind: 'file', mode: 0o644, mtime, data: enc.encode(JSON.stringify(manifest, null, 2) + '\n') }]);
  // Never write a snapshot that open.ts would refuse.
  if (tree.size + 1 > MAX_ENTRIES || tar.length > MAX_TAR_BYTES)
    throw new SnapshotError(`snapshot of ${src.root}: ${tree.size + 1} entries, ${tar.length} bytes of tar: more than a snapshot may hold (${MAX_ENTRIES} entries, ${MAX_TAR_BYTES} bytes)`);
  return { manifest, gz: gzipSync(tar, { level: 9 }), tarBytes: tar.length };
}
