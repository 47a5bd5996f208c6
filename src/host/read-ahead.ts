// The agent's read-ahead of PCI config space. A Prolog's judgement reads each GPU's, NIC's and bridge's `config`
// part by part (parsers/pci-config.ts sparseConfig); on a VM every dword is an access the hypervisor traps (~20-30
// µs), ~0.9 ms a Prolog on the one-GPU H200 node, all of it on the agent's one thread. The agent knows which files the
// previous Prolog read: as a request arrives it sends those to a worker thread (config-read-worker.ts), which reads
// them the same way (FsHost's readParts) while the main thread reads everything else, and the judgement takes each
// answer instead of reading the file itself. Every answer is read after this request arrived: as fresh as the
// main thread's own read of it would be. Anything else is read in place as before: a file the worker was not sent
// (the first Prolog, a device that came since), an answer of an earlier request, a worker that failed or was never
// started (its file missing, or not root's alone), a capture's root.
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { sparseConfig } from '../parsers/pci-config.js';
import { exists } from './entries.js';
import type { Host, ReadResult } from './host.js';
import { untrustedReason } from './trust.js';

/** Main thread → worker: the files to read for request `gen`. */
export interface ReadAheadAsk {
  readonly gen: number;
  readonly paths: readonly string[];
}
/** Worker → main thread: one file's result; null where the worker cannot read parts (no sysfs there). */
export interface ReadAheadAnswer {
  readonly gen: number;
  readonly path: string;
  readonly r: ReadResult<Uint8Array> | null;
}

/** The worker: config-read-worker.cjs beside the one-file program, or dist/config-read-worker.js beside the ESM bundle. */
export function readAheadWorkerFile(): string | null {
  const here = import.meta.url;
  return [new URL('./config-read-worker.cjs', here), new URL('../config-read-worker.js', here)].map((u) => fileURLToPath(u)).find((f) => exists(f)) ?? null;
}

/** An answer this much overdue: the worker is taken as stuck, and the judgements read in place from then on. */
export const STUCK_MS = 10_000;

/** A file sent to the worker: its answer once it comes (null: read it in place), and whether a judgement took it. */
type Waiting = { readonly answer: Promise<ReadResult<Uint8Array> | null>; readonly settle: (r: ReadResult<Uint8Array> | null) => void; taken: boolean };

function waiting(): Waiting {
  let settle: (r: ReadResult<Uint8Array> | null) => void = () => {};
  const answer = new Promise<ReadResult<Uint8Array> | null>((res) => (settle = res));
  return { answer, settle, taken: false };
}

export class ReadAhead {
  private worker: Worker | null = null;
  /** Why there is no worker (said once by the agent), null while one runs. */
  broken: string | null = null;
  private gen = 0;
  /** The files this request's judgement read (the next request's read-ahead). */
  private read = new Set<string>();
  private sent = new Map<string, Waiting>();
  /** Files sent whose answer has not come back yet (of any request). */
  private outstanding = 0;
  /** Answers the judgement took from the worker, and files it read in place (tests, the agent's figures). */
  served = 0;
  inPlace = 0;

  /** Told once when a worker that ran stops serving (failed, exited, or stuck: an answer overdue by STUCK_MS). */
  private onBroken: (why: string) => void = () => {};
  /** When the batch still outstanding was sent. */
  private sentAt = 0;
  private stuckMs = STUCK_MS;

  /**
   * Starts the worker from `file` (null: none), unless someone other than root could change it; a worker that cannot
   * be made (no thread to be had: a cgroup's pids.max, RLIMIT_NPROC) leaves every read in place.
   */
  static async start(file: string | null, o: { readonly onBroken?: (why: string) => void; readonly stuckMs?: number } = {}): Promise<ReadAhead> {
    const ra = new ReadAhead();
    if (o.onBroken) ra.onBroken = o.onBroken;
    if (o.stuckMs !== undefined) ra.stuckMs = o.stuckMs;
    const why = file === null ? 'no config-read-worker file beside the program' : untrustedReason(file, process.getuid?.() ?? 0);
    if (why !== null || file === null) {
      ra.broken = why;
      return ra;
    }
    const { Worker } = await import('node:worker_threads');
    let w: Worker;
    try {
      w = new Worker(file);
    } catch (e) {
      ra.broken = `its worker did not start: ${(e as Error).message}`;
      return ra;
    }
    w.unref();
    w.on('message', (m: ReadAheadAnswer) => {
      ra.outstanding--;
      if (m.gen === ra.gen) ra.sent.get(m.path)?.settle(m.r);
    });
    const stop = (why: string): void => {
      if (ra.worker !== w) return;
      ra.worker = null;
      ra.broken = why;
      for (const s of ra.sent.values()) s.settle(null);
      ra.sent.clear();
      ra.onBroken(why);
    };
    w.on('error', (e) => stop(`its worker failed: ${e.message}`));
    w.on('exit', (code) => stop(`its worker exited (${code})`));
    ra.worker = w;
    return ra;
  }

  /**
   * A request arrived: what the previous judgement read goes to the worker now. Answers of an earlier request that
   * were never taken are dropped (their waits end: read in place). While an earlier batch is still unanswered (a
   * read stuck in the kernel) nothing more is sent: the judgement reads in place, as without a worker.
   */
  begin(): void {
    const last = [...this.read];
    this.read = new Set();
    for (const s of this.sent.values()) s.settle(null);
    this.sent = new Map();
    this.gen++;
    if (this.worker !== null && this.outstanding > 0 && Date.now() - this.sentAt > this.stuckMs) {
      // A read stuck in the kernel holds the thread: it is left there (it cannot be ended), and never asked again.
      this.broken = `its worker has not answered for ${((Date.now() - this.sentAt) / 1000).toFixed(1)} s (a config read stuck in the kernel?)`;
      void this.worker.terminate(); // takes effect if that read ever returns
      this.worker = null;
      this.onBroken(this.broken);
    }
    if (this.worker === null || last.length === 0 || this.outstanding > 0) return;
    for (const p of last) this.sent.set(p, waiting());
    this.outstanding += last.length;
    this.sentAt = Date.now();
    this.worker.postMessage({ gen: this.gen, paths: last } satisfies ReadAheadAsk);
  }

  /** `h` with its config reads taken from the worker where it read them: only over the live node's own sysfs. */
  wrap(h: Host): Host {
    if (h.root !== '/' || !h.readParts) return h;
    const inner = h.readParts.bind(h);
    const gen = this.gen;
    const ra = this;
    return {
      root: h.root,
      list: (p) => h.list(p),
      readText: (p) => h.readText(p),
      readBytes: (p, max) => h.readBytes(p, max),
      async readParts<T>(p: string, pick: (at: (offset: number, length: number) => Uint8Array) => T): Promise<ReadResult<T>> {
        if (pick !== sparseConfig || gen !== ra.gen) return inner(p, pick);
        ra.read.add(p);
        const s = ra.sent.get(p);
        const r = s && !s.taken ? ((s.taken = true), await s.answer) : null;
        if (r === null) {
          ra.inPlace++;
          return inner(p, pick);
        }
        ra.served++;
        // pick is sparseConfig, whose result is the Uint8Array the worker's sparseConfig returned.
        return r as unknown as ReadResult<T>;
      },
      readLink: (p) => h.readLink(p),
      realPath: (p) => h.realPath(p),
      lstat: (p) => h.lstat(p),
      stat: (p) => h.stat(p),
      access: (p) => h.access(p),
      untrusted: (p) => h.untrusted(p),
    };
  }

  /** Ends the worker (the agent's stop), waiting at most `ms`: a thread in a stuck read cannot be ended. */
  async close(ms = 1000): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.broken = 'closed';
    for (const s of this.sent.values()) s.settle(null);
    this.sent.clear();
    if (w) await Promise.race([w.terminate(), new Promise((r) => setTimeout(r, ms).unref())]);
  }
}
