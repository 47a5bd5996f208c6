// Writing pcie-aer's reference counters (src/state/aer.ts says where and why); loaded after the judgement only,
// like the per-job state: store.ts brings node:crypto, which the Prolog's start must not pay for.
import { listNames } from '../host/dirs.js';
import { lstatIfAny, unlink } from '../host/entries.js';
import { writeAtomicNames } from '../host/files.js';
import type { AerReference } from '../model/aer.js';
import { AER_FORMAT, AER_JOBS_KEPT, AER_LAST, aerJobFile, JOB_RE } from './aer.js';
import { ensureStateDir } from './store.js';

/** Records a Prolog's counters: as the node's last, and for the job's Epilog when there is a job. */
export function writeAer(stateDir: string, ref: AerReference): string[] {
  ensureStateDir(stateDir);
  const text = JSON.stringify({ format: AER_FORMAT, ...ref }) + '\n';
  const files = [AER_LAST, ...(ref.job !== null ? [aerJobFile(ref.job)] : [])];
  // Both names hold the same text: one file written, the job's name linked to it (one write per Prolog, not two).
  writeAtomicNames(stateDir, files, text, { mode: 0o600 });
  return files;
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
