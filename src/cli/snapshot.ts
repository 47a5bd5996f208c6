// `gdrgate snapshot`: one tar.gz with everything the checks read, written atomically (temp file, fsync, rename).
import path from 'node:path';
import { ExecaExec } from '../host/exec.js';
import { writeAtomic } from '../host/files.js';
import { FsHost } from '../host/fs-host.js';
import { OutputCut, UsageError } from '../errors.js';
import { buildSnapshot } from '../snapshot/build.js';
import { writeStdout } from '../host/stdout.js';
import { openHost } from '../host/open.js';
import { out } from './common.js';
import { badNodeName } from '../slurm/node-name.js';

export interface SnapshotArgs {
  readonly root: string;
  readonly out?: string | undefined;
  /** Write DIR/<SLURMD_NODENAME>.tar.gz: one task of `fleet collect`'s srun step on each node. */
  readonly outDir?: string | undefined;
  readonly commands: boolean;
}

/** The node a step's task runs on: Slurm's name of it, which every task of the step gets. */
export function stepNode(env: NodeJS.ProcessEnv = process.env): string {
  const node = env.SLURMD_NODENAME;
  if (node === undefined) throw new UsageError('--out-dir names the file after SLURMD_NODENAME, which only a Slurm job step has (use --out FILE by hand)');
  const bad = badNodeName(node);
  if (bad) throw new UsageError(`--out-dir: SLURMD_NODENAME: ${bad}`);
  return node;
}

/** The file a step's task writes: named by Slurm's name of this node. */
export function stepFile(dir: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(dir, `${stepNode(env)}.tar.gz`);
}

/** gdrgate-gpu001-20260301T101500Z.tar.gz: sortable, one per node and moment. */
export function defaultName(host: string | null, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `gdrgate-${(host ?? 'unknown').replace(/[^A-Za-z0-9._-]/g, '_')}-${stamp}.tar.gz`;
}

/** The gate's one atomic write, fsynced: the archive is whole or absent, whatever happens to the machine meanwhile. */
function writeOut(file: string, data: Uint8Array, flag: string): void {
  try {
    writeAtomic(file, data, { mode: 0o644, sync: true });
  } catch (e) {
    throw new UsageError(`${flag}: ${(e as Error).message}`, { cause: e });
  }
}

export async function snapshotCommand(a: SnapshotArgs): Promise<number> {
  if (a.out !== undefined && a.outDir !== undefined) throw new UsageError('--out and --out-dir: choose one');
  const stepOut = a.outDir === undefined ? undefined : stepFile(a.outDir);
  const started = performance.now();
  const now = new Date();
  const host = await openHost(a.root);
  const live = host instanceof FsHost && path.resolve(a.root) === '/';
  const snap = await buildSnapshot(host, live, { commands: a.commands, exec: new ExecaExec(), now, uid: process.getuid?.() ?? null });
  const m = snap.manifest;
  const ms = Math.round(performance.now() - started);
  const what = `${snap.gz.length} bytes (${snap.tarBytes} uncompressed), ${m.counts.files} files, ${m.counts.links} links, ${m.counts.dirs} dirs; ${m.counts.gpus} GPU(s), ${m.counts.nics} RDMA adapter(s), ${m.counts.pathDevices} of ${m.counts.pciDevices} PCI functions in full; ${m.unreadable.length} unreadable; ${ms} ms`;
  if (a.out === '-') {
    // All of it before the command returns and the process exits; a reader that left early got a cut archive.
    if (!writeStdout(snap.gz)) throw new OutputCut(`snapshot of ${a.root}: stdout closed before the end; the archive written there is cut (${snap.gz.length} bytes were due)`);
    process.stderr.write(`gdrgate: snapshot of ${a.root}: ${what}\n`);
    return 0;
  }
  const file = stepOut ?? a.out ?? defaultName(m.host, now);
  // A missing --out-dir is named as the admin gave it (under fleet collect, this is every node's reason).
  writeOut(file, snap.gz, stepOut !== undefined ? `--out-dir ${a.outDir} (${file})` : `--out ${file}`);
  out(`${file}: snapshot of ${a.root}${m.host ? ` (host ${m.host})` : ''}: ${what}`);
  if (stepOut !== undefined) {
    // The summary fleet report reads instead of the snapshot; without it (or stale) the report reads the snapshot.
    try {
      const { writeSummary } = await import('../fleet/summary-write.js');
      out(`${await writeSummary(stepNode(), stepOut, snap.gz)}: summary of that snapshot for fleet report`);
    } catch (e) {
      process.stderr.write(`gdrgate: snapshot ${stepOut}: no summary written (fleet report will read the snapshot): ${(e as Error).message}\n`);
    }
  }
  for (const c of m.commands) out(`  ${c.name}: ${c.status}${c.exitCode !== null ? ` ${c.exitCode}` : ''}${c.error ? ` (${c.error})` : ''}, ${c.durationMs} ms`);
  return 0;
}
