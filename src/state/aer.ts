// pcie-aer's reference counters in the gate's state directory (root's, 0711): `aer-last.json`, the last judging
// run's (Prolog, health, Epilog, resume: docs/limits-and-state.md), which the next run compares with; `aer-job-<id>.json`, a job's Prolog's, which that job's Epilog compares with
// and removes. Written the gate's one way (src/host/files.ts: temporary file and rename, never through a link), read
// only when root's and not writable by others. A missing, refused or corrupt file is "no growth known", never a
// failure and never a throw.
import path from 'node:path';
import { unlink } from '../host/entries.js';
import { errno, readSmall } from '../host/files.js';
import { unsafeDirWhy } from '../host/safe-dir.js';
import type { AerHistory, AerReference, AerSample } from '../model/aer.js';
import { BDF_RE } from '../parsers/sysfs.js';
import { jobDirName } from './names.js';

export const AER_FORMAT = 'gdrgate-aer-counters/1';
export const AER_LAST = 'aer-last.json';
/** A few hundred devices at most (limits.ts): far below this. */
const MAX_BYTES = 256 * 1024;
/** Job references whose Epilog never came (a node rebooted mid-job) are pruned beyond this many. */
export const AER_JOBS_KEPT = 64;
export const JOB_RE = /^aer-job-[1-9][0-9]{0,9}\.json$/;

export const aerJobFile = (job: string): string => `aer-${jobDirName(job)}.json`;
/** aer-last.json is the last judging run's: a Prolog's, a health check's, an Epilog's or a resume's. */
export const PREVIOUS_PROLOG = 'the previous run';
export const JOB_PROLOG = "the job's Prolog";

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown): v is number | null => v === null || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);

/** Pure: the shape of a reference file; a string says what is wrong with it. */
export function asAerReference(raw: unknown): AerReference | string {
  if (!isObj(raw) || raw.format !== AER_FORMAT) return `not a ${AER_FORMAT} file`;
  if (typeof raw.time !== 'string' || !Number.isFinite(Date.parse(raw.time))) return 'time is malformed';
  if (raw.boot !== null && typeof raw.boot !== 'string') return 'boot is malformed';
  if (raw.job !== null && typeof raw.job !== 'string') return 'job is malformed';
  if (!isObj(raw.devices)) return 'devices is malformed';
  const devices: Record<string, AerSample> = {};
  for (const [bdf, s] of Object.entries(raw.devices)) {
    if (!BDF_RE.test(bdf) || !isObj(s) || !count(s.cor) || !count(s.rootCor) || !count(s.ceSta)) return `device ${bdf.slice(0, 16)} is malformed`;
    devices[bdf] = { cor: s.cor, rootCor: s.rootCor, ceSta: s.ceSta };
  }
  return { time: raw.time, boot: raw.boot, job: raw.job, devices };
}

function read(file: string, against: string): AerHistory {
  // In a directory others may write, a reference could be removed, or an older one of root's put back (growth judged
  // from counts of their choosing); none at all is the file's own "missing" below.
  const bad = unsafeDirWhy(path.dirname(file));
  if (bad !== null && bad !== 'missing') return { against, ref: null, why: `${against}'s counters refused: ${bad}` };
  const r = readSmall(file, { max: MAX_BYTES, owner: process.geteuid?.() ?? 0, mode: 'no-other-write' });
  if (!r.ok) return { against, ref: null, why: r.kind === 'missing' ? `${against} recorded no counters (a first run on this node)` : `${against}'s counters refused: ${r.why}` };
  let raw: unknown;
  try {
    raw = JSON.parse(r.value.toString('utf8'));
  } catch {
    return { against, ref: null, why: `${file} is not JSON (corrupt: starting again)` };
  }
  const ref = asAerReference(raw);
  return typeof ref === 'string' ? { against, ref: null, why: `${file}: ${ref} (corrupt: starting again)` } : { against, ref, why: '' };
}

/** The last judging run's counters, for this Prolog, health check or resume to judge growth against. */
export function readLastAer(stateDir: string): AerHistory {
  return read(`${stateDir}/${AER_LAST}`, PREVIOUS_PROLOG);
}

/**
 * Of two references, the one to judge growth from: the newer, when both are of this boot and the newer is readable.
 * The Epilog holds its job's Prolog's and the node's last: a health check or another job's Prolog that ran during the
 * job has judged the growth up to its own time, and judging from the job's Prolog again would count it twice.
 */
export function newerReference(job: AerHistory, last: AerHistory): AerHistory {
  if (!job.ref || !last.ref) return job;
  if (job.ref.boot !== last.ref.boot) return job;
  return Date.parse(last.ref.time) > Date.parse(job.ref.time) ? last : job;
}

/** This job's Prolog's counters, for its Epilog; the file is removed once read (the Epilog is its only reader). */
export function takeJobAer(stateDir: string, job: string): AerHistory {
  const file = `${stateDir}/${aerJobFile(job)}`;
  const h = read(file, JOB_PROLOG);
  try {
    unlink(file);
  } catch (e) {
    if (errno(e) !== 'ENOENT') return { ...h, why: `${h.why}${h.why ? '; ' : ''}${file} not removed: ${errno(e)}` };
  }
  return h;
}
