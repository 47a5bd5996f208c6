// Whether other jobs run on this node while this Epilog would probe. A loopback through an HCA and a GPU that another
// job is using measures that job's traffic as a slow path, and a busy rail, sustained, drained a healthy shared node; in
// EXCLUSIVE_PROCESS mode the probe cannot even open the GPU. The evidence is the gate's own: each job's state directory
// (stateDir/job-<id>, made by its Prolog, removed by its Epilog), less those Slurm's cgroup tree says have ended (v2:
// slurmstepd.scope/job_<id>; v1: freezer/slurm/uid_<uid>/job_<id>; where such a tree is there at all). No process is
// started.
import { someNames, someNamesOn } from '../host/dirs.js';
import type { Host } from '../host/host.js';
import { parseJobId } from '../state/names.js';

/** More jobs than a node runs at once: the listing stops there. */
const MAX_NAMES = 4096;
/** Where Slurm's cgroup/v2 plugin puts each job's cgroup (src/plugins/cgroup/v2: the "system.slice/slurmstepd.scope" scope). */
export const SLURM_CGROUP_V2 = '/sys/fs/cgroup/system.slice/slurmstepd.scope';
/** cgroup/v1 (proctrack/cgroup's freezer hierarchy): slurm/uid_<uid>/job_<id>. */
export const SLURM_CGROUP_V1 = '/sys/fs/cgroup/freezer/slurm';

/** At most MAX_NAMES names of the kernel path `kpath`, read through the Host as every other read of the root; null: not read. */
async function names(host: Host, kpath: string): Promise<string[] | null> {
  const r = await someNamesOn(host, kpath, MAX_NAMES);
  return r.ok ? r.value : null;
}

/**
 * The job ids Slurm's cgroup tree holds now (v2, else v1), or null where neither tree is there or can be read (in a
 * capture, a link out of its root: refused, so every job directory counts).
 */
async function slurmJobs(host: Host): Promise<Set<string> | null> {
  const ids = (listed: readonly string[]): string[] => listed.flatMap((n) => (n.startsWith('job_') ? [n.slice(4)] : []));
  const v2 = await names(host, SLURM_CGROUP_V2);
  if (v2 !== null) return new Set(ids(v2));
  const v1 = await names(host, SLURM_CGROUP_V1);
  if (v1 === null) return null;
  const out = new Set<string>();
  for (const u of v1.filter((n) => n.startsWith('uid_'))) for (const j of ids((await names(host, `${SLURM_CGROUP_V1}/${u}`)) ?? [])) out.add(j);
  return out;
}

/** The gate's own state directory (on this machine, whatever the root): its job-<id> names. */
function stateNames(dir: string): string[] {
  try {
    return someNames(dir, MAX_NAMES);
  } catch {
    return [];
  }
}

/**
 * The ids of the other jobs running on this node, by the evidence above, sorted. `host`: the node's root, opened only
 * where the state directory holds another job's (a Host that cannot be opened: could not tell, every one counts).
 */
export async function otherJobs(stateDir: string, job: string | null, host: () => Promise<Host>): Promise<string[]> {
  const ours = stateNames(stateDir).flatMap((n) => (n.startsWith('job-') ? [parseJobId(n.slice(4))] : [])).filter((j): j is string => j !== null && j !== job);
  if (!ours.length) return [];
  const running = await host().then(slurmJobs, () => null);
  return ours.filter((j) => running === null || running.has(j)).sort((a, b) => Number(a) - Number(b));
}

/** The other jobs, as said: the first four by id, then how many more. */
export const jobsText = (ids: readonly string[]): string => `job ${ids.slice(0, 4).join(', job ')}${ids.length > 4 ? `, +${ids.length - 4} more` : ''}`;
