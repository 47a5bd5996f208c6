// TaskProlog side of the handoff: read and verify this job's prolog.json as the job's user; write task.json
// for the epilog. Anything that does not verify is reported, never trusted.
import type { Stats } from '../host/entries.js';
import { errno, lstatOrNull, readSmall, writeAtomic } from '../host/files.js';
import type { HeldDir } from '../host/held-dir.js';
import { jobDirName, MAX_STATE_BYTES, PROLOG_FILE, PROLOG_FORMAT, TASK_FILE } from './names.js';
import { isGpuOrder } from './gpu-order.js';
import { PUB_FILE, verifyText } from './sign.js';
import type { Bytes, PrologState, TaskRecord } from './types.js';

export type StateRead =
  | { readonly status: 'trusted'; readonly state: PrologState }
  | { readonly status: 'missing' | 'untrusted' | 'unreadable'; readonly why: string };

export interface Expect {
  readonly job: string;
  readonly uid: number;
  /** SLURMD_NODENAME; null skips the node binding (never in a real TaskProlog). */
  readonly node: string | null;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isBytes = (v: unknown): v is Bytes => v === 'unlimited' || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);
const strs = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string' && s.length <= 256);

/** Shape check of a payload the signature already vouches for: a mismatch is version skew, not an attack. */
export function asPrologState(v: unknown): PrologState | string {
  if (!isObj(v)) return 'payload is not an object';
  const bad = (k: string): string => `payload field ${k} is malformed`;
  if (typeof v.job !== 'string') return bad('job');
  if (typeof v.uid !== 'number') return bad('uid');
  if (typeof v.node !== 'string') return bad('node');
  if (typeof v.time !== 'string') return bad('time');
  const ml = v.memlock;
  if (ml !== null && !(isObj(ml) && typeof ml.who === 'string' && isBytes(ml.soft) && isBytes(ml.hard))) return bad('memlock');
  if (v.memlockMin !== null && !isBytes(v.memlockMin)) return bad('memlockMin');
  for (const k of ['hcas', 'uverbs', 'nvidia', 'gpus'] as const) if (!strs(v[k])) return bad(k);
  const jg = v.jobGpus;
  if (jg !== null && !(Array.isArray(jg) && jg.every((n) => Number.isInteger(n) && n >= 0))) return bad('jobGpus');
  if (v.slurmGpus !== undefined && !isGpuOrder(v.slurmGpus)) return bad('slurmGpus');
  const ad = v.adapters;
  if (ad !== undefined && !(Array.isArray(ad) && ad.every((a) => isObj(a) && strs([a.name]) && (a.bdf === null || strs([a.bdf])) && (a.uverbs === null || strs([a.uverbs])) && (a.pf === undefined || strs([a.pf]))))) return bad('adapters');
  const nt = v.ncclTopo;
  if (nt !== undefined && !(isObj(nt) && typeof nt.file === 'string' && isObj(nt.paths) && Object.values(nt.paths).every((p) => typeof p === 'string'))) return bad('ncclTopo');
  return v as unknown as PrologState;
}

/**
 * Reads stateDir/job-<id>/prolog.json and says whether it can be trusted for this job, user and node. `held`: that
 * directory as root holds it (the agent: host/held-dir.ts, never entering a mount in it), else it is looked up by name.
 */
export function readPrologState(stateDir: string, want: Expect, held?: HeldDir): StateRead {
  const dir = held?.path ?? `${stateDir}/${jobDirName(want.job)}`;
  let st: Stats | null;
  try {
    st = held?.stats ?? lstatOrNull(dir);
  } catch (e) {
    return { status: 'unreadable', why: `${dir}: ${errno(e)}` };
  }
  if (st === null) return { status: 'missing', why: `${dir} does not exist (the Prolog recorded nothing for this job)` };
  if (st.isSymbolicLink()) return { status: 'untrusted', why: `${dir} is a symbolic link` };
  if (!st.isDirectory()) return { status: 'untrusted', why: `${dir} is not a directory` };
  // Root's and 0700: the directory the Prolog begins before its answer (state/prolog.ts beginJobState), whose record
  // never came (it failed, or the agent stopped first): nothing recorded, as before the directory was begun.
  if (st.uid === 0 && want.uid !== 0 && (st.mode & 0o7777) === 0o700) return { status: 'missing', why: `${dir} is still root's: the Prolog began it and wrote no record into it` };
  if (st.uid !== want.uid) return { status: 'untrusted', why: `${dir} belongs to uid ${st.uid}, not to this job's user (uid ${want.uid})` };

  const file = held ? held.read(PROLOG_FILE, { max: MAX_STATE_BYTES }) : readSmall(`${dir}/${PROLOG_FILE}`, { max: MAX_STATE_BYTES });
  if (!file.ok) return { status: file.kind === 'missing' ? 'missing' : file.kind === 'unsafe' ? 'untrusted' : 'unreadable', why: file.why };
  let env: unknown;
  try {
    env = JSON.parse(file.value.toString('utf8'));
  } catch {
    return { status: 'untrusted', why: `${PROLOG_FILE} is not JSON` };
  }
  if (!isObj(env) || env.format !== PROLOG_FORMAT || typeof env.payload !== 'string' || typeof env.signature !== 'string')
    return { status: 'untrusted', why: `${PROLOG_FILE} is not a signed gdrgate state (${PROLOG_FORMAT})` };

  // The public key must be as protected as the directory that holds it (root's in production).
  const sd = lstatOrNull(stateDir);
  if (sd === null || !sd.isDirectory()) return { status: 'unreadable', why: `${stateDir} is not a directory` };
  const pub = readSmall(`${stateDir}/${PUB_FILE}`, { max: 4096, owner: sd.uid, mode: 'no-other-write' });
  if (!pub.ok) return { status: pub.kind === 'unsafe' ? 'untrusted' : 'unreadable', why: `cannot verify: ${pub.why}` };
  if (!verifyText(env.payload, env.signature, pub.value))
    return { status: 'untrusted', why: `${PROLOG_FILE} signature does not verify (changed after the Prolog wrote it, or signed with another key)` };

  let payload: unknown;
  try {
    payload = JSON.parse(env.payload);
  } catch {
    return { status: 'unreadable', why: 'signed payload is not JSON' };
  }
  const state = asPrologState(payload);
  if (typeof state === 'string') return { status: 'unreadable', why: state };
  // A valid signature on another job's, user's or node's record (copied in) is still not this job's record.
  if (state.job !== want.job) return { status: 'untrusted', why: `${PROLOG_FILE} is the record of job ${state.job}, not of job ${want.job}` };
  if (state.uid !== want.uid) return { status: 'untrusted', why: `${PROLOG_FILE} is the record of uid ${state.uid}, not of uid ${want.uid}` };
  if (want.node !== null && state.node !== want.node) return { status: 'untrusted', why: `${PROLOG_FILE} was written on node ${state.node}, not on ${want.node}` };
  return { status: 'trusted', state };
}

/** Leaves the task's findings for the epilog; only in a directory this user owns (the Prolog created it). */
export function writeTaskRecord(stateDir: string, rec: TaskRecord): { ok: true } | { ok: false; why: string } {
  const dir = `${stateDir}/${jobDirName(rec.job)}`;
  try {
    const st = lstatOrNull(dir);
    if (st === null) return { ok: false, why: `${dir} does not exist` };
    if (!st.isDirectory() || st.uid !== rec.uid) return { ok: false, why: `${dir} is not this user's directory` };
    writeAtomic(`${dir}/${TASK_FILE}`, JSON.stringify(rec) + '\n', { mode: 0o600 });
    return { ok: true };
  } catch (e) {
    return { ok: false, why: (e as Error).message };
  }
}
