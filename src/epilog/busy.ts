// Whether other jobs run on this node while this Epilog would probe. A loopback through an HCA and a GPU that another
// job is using measures that job's traffic as a slow path, and a busy rail, sustained, drained a healthy shared node; in
// EXCLUSIVE_PROCESS mode the probe cannot even open the GPU. The evidence is the gate's own: each job's state directory
// (stateDir/job-<id>, made by its Prolog, removed by its Epilog), less those Slurm's cgroup tree says have ended (v2:
// slurmstepd.scope/job_<id>; v1: freezer/slurm/uid_<uid>/job_<id>; where such a tree is there at all). No process is
// started.
import path from 'node:path';
import { someNames } from '../host/dirs.js';
import { parseJobId } from '../state/names.js';

/** More jobs than a node runs at once: the listing stops there. */
const MAX_NAMES = 4096;
/** Where Slurm's cgroup/v2 plugin puts each job's cgroup (src/plugins/cgroup/v2: the "system.slice/slurmstepd.scope" scope). */
export const SLURM_CGROUP_V2 = '/sys/fs/cgroup/system.slice/slurmstepd.scope';
/** cgroup/v1 (proctrack/cgroup's freezer hierarchy): slurm/uid_<uid>/job_<id>. */
export const SLURM_CGROUP_V1 = '/sys/fs/cgroup/freezer/slurm';

/** The job ids Slurm's cgroup tree holds now (v2, else v1), or null where neither tree is there. */
function slurmJobs(root: string): Set<string> | null {
  const ids = (names: readonly string[]): string[] => names.flatMap((n) => (n.startsWith('job_') ? [n.slice(4)] : []));
  const v2 = names(path.join(root, SLURM_CGROUP_V2));
  if (v2 !== null) return new Set(ids(v2));
  const v1 = names(path.join(root, SLURM_CGROUP_V1));
  if (v1 === null) return null;
  return new Set(v1.filter((u) => u.startsWith('uid_')).flatMap((u) => ids(names(path.join(root, SLURM_CGROUP_V1, u)) ?? [])));
}

function names(dir: string): string[] | null {
  try {
    return someNames(dir, MAX_NAMES);
  } catch {
    return null;
  }
}

/** The ids of the other jobs running on this node, by the evidence above, sorted; `root` prefixes the cgroup path (tests). */
export function otherJobs(stateDir: string, job: string | null, root = '/'): string[] {
  const ours = (names(stateDir) ?? []).flatMap((n) => (n.startsWith('job-') ? [parseJobId(n.slice(4))] : [])).filter((j): j is string => j !== null && j !== job);
  if (!ours.length) return [];
  const running = slurmJobs(root);
  return ours.filter((j) => running === null || running.has(j)).sort((a, b) => Number(a) - Number(b));
}
