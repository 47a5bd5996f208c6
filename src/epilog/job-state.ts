// The Epilog's per-job state step (called by src/epilog/command.ts): log for the admin what the TaskProlog saw in
// the job, then remove the job's state directory. Never throws: a failing Epilog drains the node.
import { log } from '../log.js';
import { detachMounts, mountsBelow, mountsOrWhy } from '../host/mounts.js';
import { collectJobState, type JobStateOutcome } from '../state/epilog.js';
import { jobDirName } from '../state/names.js';
import { lockPathTo, lookHeld } from '../state/store.js';

/** lookHeld, or null for anything but a plain answer. */
function quietLook(stateDir: string, name: string): ReturnType<typeof lookHeld> {
  try {
    return lookHeld(stateDir, name);
  } catch {
    return null;
  }
}

/** Reads, logs and removes stateDir/job-<id>; `job` is a parsed id (src/state/names.ts). */
export async function epilogJobState(stateDir: string, job: string, node: string): Promise<JobStateOutcome> {
  const logger = await log();
  // Only root makes entries in stateDir, and never mounts there: a mount below it is a job user's (a FUSE file system on
  // their directory), which root must not enter. This job's, and those in directories set aside by an earlier Epilog,
  // are detached first without asking them anything; each one's path is taken back before (lockPathTo), so its user
  // cannot re-point it at another mount. Another running job's directory is its own Epilog's.
  const dir = `${stateDir}/${jobDirName(job)}`;
  const mine = (table: readonly string[]): string[] => table.filter((mp) => mp === dir || mp.startsWith(`${dir}/`) || mp.startsWith(`${stateDir}/.stale-`));
  const read = mountsOrWhy(stateDir);
  if ('why' in read) {
    logger.error({ job, node, why: read.why }, 'per-job state not removed');
    return { job, ownerUid: null, task: null, taskWhy: read.why, removed: false, error: `${dir} not entered, not removed: ${read.why}`, reclaimed: null };
  }
  const table = read.mounts;
  const mounted = mine(table);
  // A mount point's stat asks its file system: looked at as held, one made on it since the table was read is not.
  const seen = mounted.length && !mounted.includes(dir) ? quietLook(stateDir, jobDirName(job)) : null;
  const owner = seen !== null && seen !== 'mount' ? seen.uid : null;
  if (mounted.length) {
    // A table unread mid-way ends the detaching; what is left is said, and the look below reads the table again.
    const left = await detachMounts(() => mine(mountsBelow(stateDir)), (mp) => lockPathTo(stateDir, mp), undefined, mounted).catch((e: Error) => [e.message]);
    logger[left.length ? 'error' : 'warn']({ job, node, mounts: mounted.slice(0, 16), left }, left.length ? 'mounts below the state directory not detached: their state is left as it is' : 'mounts below the state directory detached (a job user\'s)');
  }
  // Nothing detached: the job's directory is looked at by the table just read (nothing in between). After a detach the
  // table is read again: what was detached, and what its user may have mounted on their directory since, is seen anew.
  const got = collectJobState(stateDir, job, mounted.length ? undefined : table);
  // The lock made the job's directory root's: its owner is the one seen before.
  const o = owner !== null && got.ownerUid !== null ? { ...got, ownerUid: owner } : got;
  const t = o.task;
  if (t) {
    const bad = t.state === 'untrusted' || t.findings.some((f) => f.status === 'fail' || f.status === 'error');
    logger[bad ? 'warn' : 'info']({ job, node, uid: o.ownerUid, step: t.step, state: t.state, memlock: t.memlock, ncclTopo: t.findings.some((f) => f.code === 'job-nccl-topo-set'), findings: t.findings.filter((f) => f.status !== 'pass') }, 'gdrgate job view');
  } else if (o.taskWhy) logger.info({ job, node, uid: o.ownerUid, why: o.taskWhy }, 'gdrgate job view: none recorded');
  if (o.error) logger.error({ job, node, why: o.error }, 'per-job state not removed');
  const r = o.reclaimed;
  if (r && (r.removed || r.left || r.errors.length)) logger[r.errors.length ? 'warn' : 'info']({ job, node, removed: r.removed, left: r.left, errors: r.errors }, 'set-aside job state reclaimed');
  return o;
}
