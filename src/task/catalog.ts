// Every finding of the job's own view, with what it means for the job and what the user (or admin) can do.
// Wording lives here only; the TaskProlog lines and the standalone report render from it.
import type { Layer } from '../model/finding.js';

export type TaskCheck = 'memlock-limit' | 'job-visibility' | 'job-placement' | 'job-state';

interface TaskEntry {
  readonly check: TaskCheck;
  /** What it means for this job: follows the finding's own message. */
  readonly tells: string;
  /** What to do, addressed to the job's user. */
  readonly remedy: string;
  readonly layer: Layer;
}

export const TASK_CATALOG = {
  'job-memlock-ok': { check: 'memlock-limit', tells: 'RDMA buffers can be registered', remedy: 'none', layer: 'scheduler' },
  'job-memlock-propagated': {
    check: 'memlock-limit',
    tells: 'RDMA registration will fail (Slurm copied the limit of the shell you submitted from)',
    remedy: 'ask your admin to set PropagateResourceLimitsExcept=MEMLOCK, or submit from a shell with ulimit -l unlimited',
    layer: 'scheduler',
  },
  'job-memlock-low': {
    check: 'memlock-limit',
    tells: 'RDMA registration will fail',
    remedy: "ask your admin to raise slurmd's limit (LimitMEMLOCK=infinity) or the container's (--ulimit memlock=-1)",
    layer: 'scheduler',
  },
  'job-memlock-unknown': { check: 'memlock-limit', tells: 'the locked-memory limit could not be read', remedy: 'check that /proc is mounted in the job', layer: 'application' },
  'job-visibility-ok': { check: 'job-visibility', tells: 'the job sees the RDMA and GPU devices the host has for it', remedy: 'none', layer: 'application' },
  'job-hca-missing': {
    check: 'job-visibility',
    tells: 'NCCL and MPI cannot use those adapters from this job, GPUDirect RDMA included',
    remedy: 'start the container with the host /sys/class/infiniband visible (or ask your admin why the job view hides them)',
    layer: 'application',
  },
  'job-uverbs-missing': {
    check: 'job-visibility',
    tells: 'user-space verbs cannot open those adapters: NCCL falls back to TCP sockets',
    remedy: 'pass the devices into the container (--device /dev/infiniband, or the runtime hook of your site)',
    layer: 'application',
  },
  'job-uverbs-denied': {
    check: 'job-visibility',
    tells: 'the device nodes exist but this user cannot open them read-write',
    remedy: 'ask your admin to fix the device permissions (rdma-core udev rules give 0666)',
    layer: 'scheduler',
  },
  'job-gpu-missing': {
    check: 'job-visibility',
    tells: 'CUDA cannot open the GPUs Slurm gave this job',
    remedy: 'pass the GPU devices into the container (--gpus, or the runtime hook of your site)',
    layer: 'application',
  },
  'job-gpu-denied': {
    check: 'job-visibility',
    tells: 'the GPU device nodes exist but this user cannot open them read-write',
    remedy: 'ask your admin to check the device permissions (NVreg_DeviceFileMode) and cgroup device rules',
    layer: 'scheduler',
  },
  'job-no-rdma': {
    check: 'job-visibility',
    tells: 'GPUDirect RDMA and NCCL over InfiniBand/RoCE are impossible from this environment',
    remedy: 'run on a node with RDMA adapters and make /sys/class/infiniband and /dev/infiniband visible to the container',
    layer: 'application',
  },
  'job-view-unknown': { check: 'job-visibility', tells: 'part of the job view could not be read', remedy: 'check /sys and /dev are mounted in the job', layer: 'application' },
  'job-placement-ok': { check: 'job-placement', tells: "the job's CPUs and memory are on its GPUs' NUMA nodes and their nearest adapters are visible", remedy: 'none', layer: 'scheduler' },
  'job-cpus-far': {
    check: 'job-placement',
    tells: 'NCCL keeps this far CPU mask for that GPU, so its proxy threads and host staging cross the socket link (public measurements: about half the bandwidth)',
    remedy: "ask for CPUs next to your GPUs: srun --gres-flags=enforce-binding, or --cpu-bind=map_cpu:/mask_cpu: with the GPU's local CPUs (the admin can set Cores= in gres.conf)",
    layer: 'scheduler',
  },
  'job-mems-far': {
    check: 'job-placement',
    tells: "pinned host buffers for that GPU come from another NUMA node, so every copy and RDMA transfer crosses the socket link",
    remedy: "bind memory next to the GPU (srun --mem-bind=local, or numactl --localalloc) and ask your admin why the job's cpuset leaves out the GPU's node",
    layer: 'scheduler',
  },
  'job-nic-hidden': {
    check: 'job-placement',
    tells: 'GPUDirect RDMA for that GPU has to use a farther adapter or bounce through host memory',
    remedy: "add the adapter to the container's device list (its /sys/class/infiniband entry and /dev/infiniband/uverbs node), or ask your admin why the job view hides it",
    layer: 'application',
  },
  'job-placement-unknown': {
    check: 'job-placement',
    tells: "part of the job's placement could not be read or was not checked (no SLURM_JOB_GPUS, no baseline matrix): the message says which and why",
    remedy: 'check that /proc and /sys are mounted in the job; give the node its baseline class; ask for GPUs with --gpus so Slurm sets SLURM_JOB_GPUS',
    layer: 'application',
  },
  'job-nccl-topo-set': {
    check: 'job-visibility',
    tells: "NCCL reads the node's topology from the file gdrgate wrote as root instead of from this job's /sys",
    remedy: 'none; set NCCL_TOPO_FILE yourself to use another file',
    layer: 'application',
  },
  'job-nccl-topo-kept': {
    check: 'job-visibility',
    tells: 'NCCL reads the topology file the job chose; gdrgate did not replace it',
    remedy: "unset NCCL_TOPO_FILE to let gdrgate hand the host's topology",
    layer: 'application',
  },
  'job-nccl-topo-unreachable': {
    check: 'job-visibility',
    tells: 'NCCL builds its topology from what this job sees of /sys, and may pick the wrong adapter for a GPU',
    remedy: "mount gdrgate's state directory into the container (or ask your admin to), or start it with the host /sys",
    layer: 'application',
  },
  'job-state-ok': { check: 'job-state', tells: "the host's record for this job verifies", remedy: 'none', layer: 'security' },
  'job-state-missing': {
    check: 'job-state',
    tells: 'the job view is checked on its own, without the host side to compare',
    remedy: 'none for you; the admin can check that gdrgate runs as Prolog',
    layer: 'scheduler',
  },
  'job-state-untrusted': {
    check: 'job-state',
    tells: 'it is ignored and the job view is checked on its own',
    remedy: 'do not edit files under the gdrgate state directory; the admin has been told',
    layer: 'security',
  },
  'job-state-unreadable': {
    check: 'job-state',
    tells: 'the job view is checked on its own, without the host side to compare',
    remedy: 'none for you; the admin can check the state directory',
    layer: 'scheduler',
  },
} as const satisfies Record<string, TaskEntry>;

export type TaskCode = keyof typeof TASK_CATALOG;

export function taskEntry(code: TaskCode): TaskEntry {
  return TASK_CATALOG[code];
}
