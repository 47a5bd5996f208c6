// Epilog side: take the job's directory back, read what the TaskProlog left (task.json, written by the job's
// user: untrusted input, bounded and re-typed field by field; schemas/task.schema.json is what a TaskProlog
// writes), and remove the directory. The record is the job's own unverified report: it is logged and its
// catalog codes counted (gdrgate_task_findings_total), and nothing is ever decided on it (no drain, no exit code).
import type { Status } from '../model/finding.js';
import { isTaskCode } from '../task/records.js';
import { jobDirName, MAX_STATE_BYTES, TASK_FILE, TASK_FORMAT } from './names.js';
import { readSmall } from '../host/files.js';
import { mountAt, mountsOrWhy } from '../host/mounts.js';
import { lockHeld, reclaimStale, removeJobDir, type Reclaimed } from './store.js';
import type { Bytes, TaskFindingRecord } from './types.js';

/** What the admin's log gets: only fields we know, each bounded and stripped of control characters. */
export interface TaskSummary {
  readonly step: string | null;
  readonly state: string;
  readonly memlock: { readonly soft: Bytes; readonly hard: Bytes; readonly source: string } | null;
  readonly findings: readonly TaskFindingRecord[];
}

export interface JobStateOutcome {
  readonly job: string;
  /** Owner of the directory before the epilog took it back: the job's uid unless someone tampered. */
  readonly ownerUid: number | null;
  readonly task: TaskSummary | null;
  /** Why task is null (missing, unsafe, malformed). */
  readonly taskWhy: string | null;
  readonly removed: boolean;
  readonly error: string | null;
  /** Earlier jobs' set-aside directories taken back by this epilog (a bounded share; later epilogs go on). */
  readonly reclaimed: Reclaimed | null;
}

const STATUSES: readonly Status[] = ['pass', 'warn', 'fail', 'skip', 'error'];
const STATES = ['trusted', 'missing', 'untrusted', 'unreadable'] as const;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const clean = (v: unknown, max: number): string | null => (typeof v === 'string' ? v.replace(/[\x00-\x1f\x7f]/g, ' ').slice(0, max) : null);
const bytes = (v: unknown): Bytes | null => (v === 'unlimited' || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) ? v : null);

/** Pure: re-types an untrusted task.json; a string says what was wrong with it. */
export function summarizeTaskRecord(raw: unknown, job: string): TaskSummary | string {
  if (!isObj(raw) || raw.format !== TASK_FORMAT) return `${TASK_FILE} is not a gdrgate task record`;
  if (raw.job !== job) return `${TASK_FILE} names job ${clean(raw.job, 24) ?? '?'}, not ${job}`;
  const m = isObj(raw.memlock) ? raw.memlock : null;
  const soft = bytes(m?.soft);
  const hard = bytes(m?.hard);
  const findings = (Array.isArray(raw.findings) ? raw.findings : []).slice(0, 32).flatMap((f): TaskFindingRecord[] => {
    if (!isObj(f)) return [];
    const status = STATUSES.find((s) => s === f.status);
    // Only codes the TaskProlog can emit: anything else would be a metric series of the job's own making.
    const code = isTaskCode(f.code) ? f.code : null;
    if (!status || !code) return [];
    return [{ code, status, subject: clean(f.subject, 128) ?? '', message: clean(f.message, 300) ?? '' }];
  });
  return {
    step: clean(raw.step, 32),
    state: STATES.find((s) => s === raw.state) ?? 'unknown',
    memlock: soft !== null && hard !== null ? { soft, hard, source: clean(m?.source, 32) ?? '' } : null,
    findings,
  };
}

/** Reads and removes stateDir/job-<id>, looking first at `mounts` (the mount table below stateDir, just read). Never throws. */
export function collectJobState(stateDir: string, job: string, given?: readonly string[]): JobStateOutcome {
  const dir = `${stateDir}/${jobDirName(job)}`;
  let ownerUid: number | null = null;
  let task: TaskSummary | null = null;
  let taskWhy: string | null = null;
  // A mount table that cannot be read: whether the directory is a user's mount cannot be told, so it is not entered.
  const unread = (why: string): JobStateOutcome => ({ job, ownerUid, task, taskWhy: why, removed: false, error: `${dir} not entered, not removed: ${why}`, reclaimed: null });
  const read = given !== undefined ? { mounts: given } : mountsOrWhy(stateDir);
  if ('why' in read) return unread(read.why);
  const mounts = read.mounts;
  // A mount on or in the job's directory (its user's) is never entered: not read, not removed.
  const mount = mountAt(mounts, dir);
  const refused = (m: string): JobStateOutcome => ({ job, ownerUid, task, taskWhy: `${m} is a mount: not entered`, removed: false, error: `${m} is a mount (its user's?): not entered, not removed`, reclaimed: null });
  if (mount !== null) return refused(mount);
  let locked: readonly string[] | null = null;
  try {
    // Looked at and taken back as held: a mount its user made on it since `mounts` was read is told, never entered.
    const st = lockHeld(stateDir, jobDirName(job));
    if (st === 'mount') return refused(dir);
    if (st === null) return { job, ownerUid, task, taskWhy: 'no state directory', removed: false, error: null, reclaimed: reclaimStale(stateDir) };
    ownerUid = st.uid;
    if (st.isDirectory()) {
      // From here on the user can neither add to the directory nor swap task.json for a link, nor mount in it
      // (fusermount looks the mount point up through it): one made before that, since `mounts` was read, is in the
      // table read now, and nothing in the directory is opened.
      const now = mountsOrWhy(stateDir);
      if ('why' in now) return unread(now.why);
      locked = now.mounts;
      const inside = mountAt(locked, dir);
      if (inside !== null) return refused(inside);
      const f = readSmall(`${dir}/${TASK_FILE}`, { max: MAX_STATE_BYTES });
      if (f.ok) {
        let raw: unknown = null;
        try {
          raw = JSON.parse(f.value.toString('utf8'));
        } catch {
          taskWhy = `${TASK_FILE} is not JSON`;
        }
        if (taskWhy === null) {
          const s = summarizeTaskRecord(raw, job);
          if (typeof s === 'string') taskWhy = s;
          else task = s;
        }
      } else taskWhy = f.kind === 'missing' ? 'no task record (the TaskProlog did not run or did not write)' : f.why;
    }
  } catch (e) {
    taskWhy ??= (e as Error).message;
  }
  const rm = removeJobDir(stateDir, job, undefined, locked ? { locked } : { mounts });
  const reclaimed = reclaimStale(stateDir);
  return { job, ownerUid, task, taskWhy, removed: rm.ok && rm.removed, error: rm.ok ? null : `${rm.why}${rm.setAside ? ` (set aside as ${rm.setAside})` : ''}`, reclaimed };
}
