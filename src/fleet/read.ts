// Every node of a fleet directory read for the judge (read-one.ts: its summary when that holds, else its snapshot
// through the one engine), with progress: nodes read of total and the one pending longest. A node that cannot be
// read is a missing node, listed, never fatal. From POOL_FROM nodes on, the nodes are read on every core by a pool
// of worker threads (read-worker.ts, dist/fleet-read-worker.js), a few jobs in flight per worker, results in input
// order; below it, or where the worker file is not there (the sources run by a TypeScript loader), in process, a
// few at a time. Either way each node comes with its view key (digest.ts): nodes of one key compare alike and share
// one view object, so memory grows with the distinct views, not with the nodes.
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CompareView } from '../compare/view.js';
import { exists } from '../host/entries.js';
import { viewKey } from './digest.js';
import { readFleetNode, type FactSource, type WorkerAnswer, type WorkerJob } from './read-one.js';
import type { NodeMissing } from './types.js';

export interface FleetProgress {
  readonly done: number;
  readonly total: number;
  /** The pending node read longest, and for how long (ms); null when none is pending. */
  readonly slowest: { readonly node: string; readonly ms: number } | null;
}

export interface ReadNode {
  readonly node: string;
  /** Its snapshot. */
  readonly file: string;
  /** What a comparison reads of the node; one object for every node of its key. */
  readonly view: CompareView;
  /** The view key (digest.ts): nodes of one key hold alike everything a comparison reads. */
  readonly key: string;
  readonly source: FactSource;
  /** Why its summary was not used, when it had one. */
  readonly note: string | null;
  /** When its snapshot was taken (the manifest's time), ms; null when it records none. */
  readonly time: number | null;
}

/** A node read, or why it could not be. */
type Got = { readonly view: CompareView; readonly key: string; readonly source: FactSource; readonly note: string | null; readonly time: number | null } | { readonly why: string };

export interface ReadOptions {
  /** In process: snapshots opened at once (default 4: the reads are mostly CPU, a few overlap the file reads). */
  readonly concurrency?: number;
  /** Worker threads: 0 reads in process; default one per core (at most 4) from POOL_FROM nodes on, else 0. */
  readonly workers?: number;
  /** The worker's file (default dist/fleet-read-worker.js beside this module's directory). */
  readonly workerFile?: string;
  readonly onProgress?: (p: FleetProgress) => void;
  readonly now?: () => number;
}

/** Below this many snapshots the workers' start-up (about 0.1 s each) costs more than the second core gives. */
export const POOL_FROM = 50;
/** Batches sent to one worker before its first answer: it never waits on the main thread between two batches. */
const IN_FLIGHT = 2;
/** Nodes per message: a node read from its summary costs about as much as a message each way, so they go in batches. */
const BATCH = 16;

/**
 * The bundled worker: dist/fleet-read-worker.js beside the ESM bundle (from dist/chunks/ or tsc's dist/fleet/), or
 * fleet-read-worker.cjs beside the one-file program (dist/gdrgate.cjs, /usr/lib/gdrgate/gdrgate.cjs).
 */
export const defaultWorkerFile = (): string => {
  const here = import.meta.url;
  const candidates = [new URL('./fleet-read-worker.cjs', here), new URL('../fleet-read-worker.js', here)].map((u) => fileURLToPath(u));
  return candidates.find((f) => exists(f)) ?? candidates[candidates.length - 1]!;
};

function workerCount(n: number, o: ReadOptions): { count: number; file: string } {
  const file = o.workerFile ?? defaultWorkerFile();
  const want = o.workers ?? (n >= POOL_FROM ? Math.min(4, availableParallelism()) : 0);
  if (want <= 0 || n === 0 || !exists(file)) return { count: 0, file };
  return { count: Math.min(want, n), file };
}

type Job = { readonly node: string; readonly file: string; readonly summary?: string | null };

export async function readFleet(snapshots: readonly Job[], o: ReadOptions = {}): Promise<{ read: ReadNode[]; missing: NodeMissing[] }> {
  const now = o.now ?? Date.now;
  const read: (ReadNode | null)[] = new Array<ReadNode | null>(snapshots.length).fill(null);
  const missing: NodeMissing[] = [];
  const pending = new Map<string, number>();
  let done = 0;
  const tell = (): void => {
    if (!o.onProgress) return;
    let slowest: FleetProgress['slowest'] = null;
    const t = now();
    // Insertion order is start order: the first pending entry is the one waiting longest.
    for (const [node, since] of pending) {
      slowest = { node, ms: t - since };
      break;
    }
    o.onProgress({ done, total: snapshots.length, slowest });
  };
  // One view object per key, whichever way the node was read.
  const views = new Map<string, CompareView>();
  const settle = (i: number, r: Got): void => {
    const s = snapshots[i]!;
    if ('view' in r) {
      let view = views.get(r.key);
      if (!view) views.set(r.key, (view = r.view));
      read[i] = { node: s.node, file: s.file, view, key: r.key, source: r.source, note: r.note, time: r.time };
    }
    else missing.push({ node: s.node, why: r.why });
    pending.delete(s.node);
    done++;
    tell();
  };
  tell();
  const pool = workerCount(snapshots.length, o);
  if (pool.count > 0) await inWorkers(snapshots, pool.count, pool.file, (i) => pending.set(snapshots[i]!.node, now()), settle);
  else {
    let next = 0;
    const one = async (): Promise<void> => {
      while (next < snapshots.length) {
        const i = next++;
        const s = snapshots[i]!;
        pending.set(s.node, now());
        let r: Got;
        try {
          const one = await readFleetNode(s.node, s.file, s.summary ?? null);
          r = 'view' in one ? { ...one, key: viewKey(one.view) } : one;
        } catch (e) {
          pending.delete(s.node);
          throw e;
        }
        settle(i, r);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? 4, snapshots.length)) }, one));
  }
  return { read: read.filter((r): r is ReadNode => r !== null), missing };
}

/**
 * The pool: each worker kept IN_FLIGHT batches of BATCH nodes ahead; a fault in any (not an unreadable snapshot) ends
 * the read. A worker sends a key's view with its first node of that key: its answers arrive in order.
 */
function inWorkers(snapshots: readonly Job[], count: number, file: string, start: (i: number) => void, settle: (i: number, r: Got) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const workers: Worker[] = [];
    const shared = new Map<string, CompareView>();
    let next = 0;
    let settled = 0;
    let over = false;
    const end = (e: Error | null): void => {
      if (over) return;
      over = true;
      for (const w of workers) void w.terminate();
      if (e) reject(e);
      else resolve();
    };
    const send = (w: Worker): void => {
      const batch: WorkerJob[] = [];
      for (; next < snapshots.length && batch.length < BATCH; next++) {
        start(next);
        batch.push({ i: next, node: snapshots[next]!.node, file: snapshots[next]!.file, summary: snapshots[next]!.summary ?? null });
      }
      if (batch.length) w.postMessage(batch);
    };
    for (let k = 0; k < count; k++) {
      const w = new Worker(file);
      workers.push(w);
      w.on('message', (answers: WorkerAnswer[]) => {
        for (const m of answers) {
          if (over) return;
          if ('fatal' in m) return end(new Error(`reading ${snapshots[m.i]?.file ?? '?'}: ${m.fatal}`));
          if ('why' in m) settle(m.i, { why: m.why });
          else {
            if (m.view && !shared.has(m.key)) shared.set(m.key, m.view);
            const view = shared.get(m.key);
            if (!view) return end(new Error(`fleet read worker: node ${snapshots[m.i]?.node ?? '?'} of a key it never sent`));
            settle(m.i, { view, key: m.key, source: m.source, note: m.note, time: m.time });
          }
          if (++settled === snapshots.length) return end(null);
        }
        send(w);
      });
      w.on('error', (e) => end(e));
      w.on('exit', (code) => {
        if (!over) end(new Error(`fleet read worker exited (${code}) before the read was done`));
      });
      for (let j = 0; j < IN_FLIGHT; j++) send(w);
    }
  });
}
