// Whether other jobs run on this node while this Epilog would probe. A loopback through an HCA and a GPU that another
// job is using measures that job's traffic as a slow path, and a busy rail, sustained, drained a healthy shared node; in
// EXCLUSIVE_PROCESS mode the probe cannot even open the GPU. The evidence is the gate's own: each job's state directory
// (stateDir/job-<id>, made by its Prolog, removed by its Epilog), less those Slurm's cgroup tree says have ended (cgroup
// v2, slurmstepd.scope/job_<id>, where that tree is there at all). No process is started.
import path from 'node:path';
import { someNames } from '../host/dirs.js';
import { parseJobId } from '../state/names.js';

/** More jobs than a node runs at once: the listing stops there. */
const MAX_NAMES = 4096;
/** Where Slurm's cgroup/v2 plugin puts each job's cgroup (src/plugins/cgroup/v2: the "system.slice/slurmstepd.scope" scope). */
export const SLURM_CGROUP_V2 = '/sys/fs/cgroup/system.slice/slurmstepd.scope';

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
  const cg = names(path.join(root, SLURM_CGROUP_V2));
  const running = cg === null ? null : new Set(cg.flatMap((n) => (n.startsWith('job_') ? [n.slice(4)] : [])));
  return ours.filter((j) => running === null || running.has(j)).sort((a, b) => Number(a) - Number(b));
}
