// Names of the per-job state: job ids, uids and gids from Slurm's environment, validated before they ever form
// a path or a chown, and the state's file names and formats.

const JOB_RE = /^[1-9][0-9]{0,9}$/;
const ID_RE = /^(0|[1-9][0-9]{0,9})$/;
/** (uid_t)-1 means "no change" to chown(2): never a valid owner. */
const ID_MAX = 0xfffffffe;

/** A Slurm job id: digits only, no sign, no leading zero, at most 10 digits (`../x`, `1/2`, `` → null). */
export function parseJobId(s: string | undefined): string | null {
  return s !== undefined && JOB_RE.test(s) ? s : null;
}

/** A uid or gid as Slurm exports it (`SLURM_JOB_UID=1001`); null when absent or malformed. */
export function parseId(s: string | undefined): number | null {
  if (s === undefined || !ID_RE.test(s)) return null;
  const n = Number(s);
  return n <= ID_MAX ? n : null;
}

/** The directory name of a job's state: `job-<id>`. Only ever called with a parsed id. */
export function jobDirName(job: string): string {
  if (!JOB_RE.test(job)) throw new Error(`not a job id: ${JSON.stringify(job)}`);
  return `job-${job}`;
}

/** The name in stateDir of a job's TaskProlog FIFO (src/agent/task-fifos.ts): `tasks-<id>`. Only ever called with a parsed id. */
export function taskFifoName(job: string): string {
  if (!JOB_RE.test(job)) throw new Error(`not a job id: ${JSON.stringify(job)}`);
  return `tasks-${job}`;
}

export const PROLOG_FORMAT = 'gdrgate-prolog-state/1';
export const TASK_FORMAT = 'gdrgate-task-state/1';
/** Both files are small; anything larger is not ours. */
export const MAX_STATE_BYTES = 64 * 1024;
export const PROLOG_FILE = 'prolog.json';
export const TASK_FILE = 'task.json';
/** The node's NCCL topology (gdrgate topo --nccl-xml), written beside prolog.json when the class asks for it. */
export const NCCL_TOPO_FILE = 'nccl-topo.xml';
/** The device nodes both sides list: /dev/infiniband/uverbs<N> and /dev/nvidia* (nvidia0, nvidiactl, nvidia-uvm…). */
export const UVERBS_RE = /^uverbs\d+$/;
export const NVIDIA_RE = /^nvidia/;
