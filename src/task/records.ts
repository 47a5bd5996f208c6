// The job's own view (gdrgate task) as records, with what each finding means for the job and what its user (or the
// admin) can do. An id names one area of the node: memlock-limit and job-placement are judged on the node by their
// check (src/checks/) and inside the job here; each source words its own codes, and no code belongs to two records.
import { defineRecord, type Codes } from '../checks/types.js';

/** The job's own locked-memory limit: memlock-limit judged from inside the job (the node check judges slurmd's and the gate's). */
const MEMLOCK = {
  'job-memlock-ok': { tells: 'RDMA buffers can be registered', do: 'none', layer: 'scheduler' },
  'job-memlock-propagated': {
    tells: 'RDMA registration will fail (Slurm copied the limit of the shell you submitted from)',
    do: 'ask your admin to set PropagateResourceLimitsExcept=MEMLOCK, or submit from a shell with ulimit -l unlimited',
    layer: 'scheduler',
  },
  'job-memlock-low': {
    tells: 'RDMA registration will fail',
    do: "ask your admin to raise slurmd's limit (LimitMEMLOCK=infinity) or the container's (--ulimit memlock=-1)",
    layer: 'scheduler',
  },
  'job-memlock-unknown': { tells: 'the locked-memory limit could not be read', do: 'check that /proc is mounted in the job', layer: 'application' },
} as const satisfies Codes;

/** The RDMA and GPU devices the job sees, and the NCCL topology file it is handed. */
const VISIBILITY = {
  'job-visibility-ok': { tells: 'the job sees the RDMA and GPU devices the host has for it', do: 'none', layer: 'application' },
  'job-hca-missing': {
    tells: 'NCCL and MPI cannot use those adapters from this job, GPUDirect RDMA included',
    do: 'start the container with the host /sys/class/infiniband visible (or ask your admin why the job view hides them)',
    layer: 'application',
  },
  'job-uverbs-missing': {
    tells: 'user-space verbs cannot open those adapters: NCCL falls back to TCP sockets',
    do: 'pass the devices into the container (--device /dev/infiniband, or the runtime hook of your site)',
    layer: 'application',
  },
  'job-uverbs-denied': {
    tells: 'the device nodes exist but this user cannot open them read-write',
    do: 'ask your admin to fix the device permissions (rdma-core udev rules give 0666)',
    layer: 'scheduler',
  },
  'job-gpu-missing': {
    tells: 'CUDA cannot open the GPUs Slurm gave this job',
    do: 'pass the GPU devices into the container (--gpus, or the runtime hook of your site)',
    layer: 'application',
  },
  'job-gpu-denied': {
    tells: 'the GPU device nodes exist but this user cannot open them read-write',
    do: 'ask your admin to check the device permissions (NVreg_DeviceFileMode) and cgroup device rules',
    layer: 'scheduler',
  },
  'job-no-rdma': {
    tells: 'GPUDirect RDMA and NCCL over InfiniBand/RoCE are impossible from this environment',
    do: 'run on a node with RDMA adapters and make /sys/class/infiniband and /dev/infiniband visible to the container',
    layer: 'application',
  },
  'job-view-unknown': { tells: 'part of the job view could not be read', do: 'check /sys and /dev are mounted in the job', layer: 'application' },
  'job-nccl-topo-set': {
    tells: "NCCL reads the node's topology from the file gdrgate wrote as root instead of from this job's /sys",
    do: 'none; set NCCL_TOPO_FILE yourself to use another file',
    layer: 'application',
  },
  'job-nccl-topo-kept': {
    tells: 'NCCL reads the topology file the job chose; gdrgate did not replace it',
    do: "unset NCCL_TOPO_FILE to let gdrgate hand the host's topology",
    layer: 'application',
  },
  'job-nccl-topo-unreachable': {
    tells: 'NCCL builds its topology from what this job sees of /sys, and may pick the wrong adapter for a GPU',
    do: "mount gdrgate's state directory into the container (or ask your admin to), or start it with the host /sys",
    layer: 'application',
  },
} as const satisfies Codes;

/** The job's CPUs, memory and adapters against its GPUs: job-placement judged from inside the job (the node check judges gres.conf). */
const PLACEMENT = {
  'job-placement-ok': { tells: "the job's CPUs and memory are on its GPUs' NUMA nodes and their nearest adapters are visible", do: 'none', layer: 'scheduler' },
  'job-cpus-far': {
    tells: 'NCCL keeps this far CPU mask for that GPU, so its proxy threads and host staging cross the socket link (public measurements: about half the bandwidth)',
    do: "ask for CPUs next to your GPUs: srun --gres-flags=enforce-binding, or --cpu-bind=map_cpu:/mask_cpu: with the GPU's local CPUs (the admin can set Cores= in gres.conf)",
    layer: 'scheduler',
  },
  'job-mems-far': {
    tells: "pinned host buffers for that GPU come from another NUMA node, so every copy and RDMA transfer crosses the socket link",
    do: "bind memory next to the GPU (srun --mem-bind=local, or numactl --localalloc) and ask your admin why the job's cpuset leaves out the GPU's node",
    layer: 'scheduler',
  },
  'job-nic-hidden': {
    tells: 'GPUDirect RDMA for that GPU has to use a farther adapter or bounce through host memory',
    do: "add the adapter to the container's device list (its /sys/class/infiniband entry and /dev/infiniband/uverbs node), or ask your admin why the job view hides it",
    layer: 'application',
  },
  'job-placement-unknown': {
    tells: "part of the job's placement could not be read or was not checked (no SLURM_JOB_GPUS, no baseline matrix): the message says which and why",
    do: 'check that /proc and /sys are mounted in the job; give the node its baseline class; ask for GPUs with --gpus so Slurm sets SLURM_JOB_GPUS',
    layer: 'application',
  },
} as const satisfies Codes;

/** The host's signed record for this job, which the job view is compared with. */
const STATE = {
  'job-state-ok': { tells: "the host's record for this job verifies", do: 'none', layer: 'security' },
  'job-state-missing': {
    tells: 'the job view is checked on its own, without the host side to compare',
    do: 'none for you; the admin can check that gdrgate runs as Prolog',
    layer: 'scheduler',
  },
  'job-state-untrusted': {
    tells: 'it is ignored and the job view is checked on its own',
    do: 'do not edit files under the gdrgate state directory; the admin has been told',
    layer: 'security',
  },
  'job-state-unreadable': {
    tells: 'the job view is checked on its own, without the host side to compare',
    do: 'none for you; the admin can check the state directory',
    layer: 'scheduler',
  },
} as const satisfies Codes;

/** The job view's records, in the order its findings are judged. */
export const JOB_VIEW = [
  defineRecord({ id: 'memlock-limit', source: 'job', codes: MEMLOCK }),
  defineRecord({ id: 'job-visibility', source: 'job', codes: VISIBILITY }),
  defineRecord({ id: 'job-placement', source: 'job', codes: PLACEMENT }),
  defineRecord({ id: 'job-state', source: 'job', codes: STATE }),
] as const;

export type TaskCheck = (typeof JOB_VIEW)[number]['id'];
type CodesOf<T> = T extends { readonly codes: infer C } ? keyof C & string : never;
export type TaskCode = CodesOf<(typeof JOB_VIEW)[number]>;

/** The record each job-view code belongs to. */
export const TASK_CHECK_OF: Readonly<Record<TaskCode, TaskCheck>> = Object.fromEntries(JOB_VIEW.flatMap((r) => Object.keys(r.codes).map((c) => [c, r.id]))) as Record<TaskCode, TaskCheck>;

/** Whether a string read back from a task record is a job-view code (state/epilog.ts, epilog/task-counts.ts). */
export function isTaskCode(code: unknown): code is TaskCode {
  return typeof code === 'string' && Object.hasOwn(TASK_CHECK_OF, code);
}
