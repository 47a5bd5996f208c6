// Writing pcie-aer's reference counters (src/state/aer.ts says where and why); loaded after the judgement only,
// like the per-job state: store.ts brings node:crypto, which the Prolog's start must not pay for.
import path from 'node:path';
import { listNames } from '../host/dirs.js';
import { lstatIfAny, unlink } from '../host/entries.js';
import { writeAtomicNames } from '../host/files.js';
import { takeLock, type Lock } from '../host/lock.js';
import type { AerReference } from '../model/aer.js';
import { AER_FORMAT, AER_JOBS_KEPT, AER_LAST, aerJobFile, JOB_RE, readLastAer } from './aer.js';
import { ensureStateDir } from './store.js';

const AER_LOCK = 'aer.lock';
/** Held for one small read and one write: a holder this long is gone, or stuck. */
const LOCK_STALE_MS = 10_000;
/** How long a writer waits for another's read and write before it writes unlocked (a run's record is never lost). */
const LOCK_WAIT_MS = 1000;

function aerLock(stateDir: string): Lock {
  const take = (): Lock => takeLock(path.join(stateDir, AER_LOCK), { staleMs: LOCK_STALE_MS, holder: (pid) => `another run${pid} is recording its AER counters` });
  // Synchronous, as the write it guards: 5 ms naps (Atomics.wait) while another run holds it, 1 s at most.
  const nap = new Int32Array(new SharedArrayBuffer(4));
  let lock = take();
  for (const until = performance.now() + LOCK_WAIT_MS; !lock.ok && lock.held && performance.now() < until; lock = take()) Atomics.wait(nap, 0, 0, 5);
  return lock;
}

/**
 * Whether aer-last.json holds counters read after `ref`'s (same boot, its time later than `ref`'s and not ahead of the
 * clock): a run that read the counters before another run judged them must not put its older ones back, or the next
 * run judges the errors between the two again. A time ahead of the clock (a clock stepped back since) never holds.
 */
function newerOnDisk(stateDir: string, ref: AerReference, now: number): boolean {
  const last = readLastAer(stateDir).ref;
  if (last === null || last.boot !== ref.boot) return false;
  const t = Date.parse(last.time);
  return t > Date.parse(ref.time) && t <= now;
}

/**
 * Records a run's counters (`ref.time`: when the run began reading them): as the node's last unless a run that read
 * them later has recorded its own since, and for the job's Epilog when there is a job. Under stateDir/aer.lock, so that
 * the look at the last reference and the rename over it are one step for concurrent runs.
 */
export function writeAer(stateDir: string, ref: AerReference): string[] {
  ensureStateDir(stateDir);
  const text = JSON.stringify({ format: AER_FORMAT, ...ref }) + '\n';
  const lock = aerLock(stateDir);
  try {
    const files = [...(newerOnDisk(stateDir, ref, Date.now()) ? [] : [AER_LAST]), ...(ref.job !== null ? [aerJobFile(ref.job)] : [])];
    // Both names hold the same text: one file written, the job's name linked to it (one write per Prolog, not two).
    writeAtomicNames(stateDir, files, text, { mode: 0o600 });
    return files;
  } finally {
    if (lock.ok) lock.release();
  }
}

/** Job references beyond the newest `keep` (their Epilog never ran): removed by the Epilog, off the Prolog's path. */
export function pruneJobAer(stateDir: string, keep = AER_JOBS_KEPT): number {
  let names: string[];
  try {
    names = listNames(stateDir).filter((n) => JOB_RE.test(n));
  } catch {
    return 0;
  }
  if (names.length <= keep) return 0;
  const aged = names.map((n) => ({ n, t: lstatIfAny(`${stateDir}/${n}`)?.mtimeMs ?? 0 })).sort((a, b) => a.t - b.t);
  let removed = 0;
  for (const { n } of aged.slice(0, aged.length - keep)) {
    try {
      unlink(`${stateDir}/${n}`);
      removed++;
    } catch {
      // gone meanwhile, or not ours to remove: the next Epilog tries again
    }
  }
  return removed;
}
