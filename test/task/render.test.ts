// TaskProlog protocol on stdout: only `print <text>` lines, each one line; and the exit code policy.
import t from 'tap';
import { TASK_CHECK_OF, type TaskCode } from '../../src/task/records.js';
import { tf } from '../../src/task/finding.js';
import { renderStandalone, taskPrologLines } from '../../src/task/render.js';
import { exitCode, taskResult } from '../../src/runner/exit.js';

/** What a user is told after each code's message (tells; do), as the TaskProlog prints it. */
const ADVICE: Record<TaskCode, string> = {
  'job-memlock-ok': 'RDMA buffers can be registered',
  'job-memlock-propagated': 'RDMA registration will fail (Slurm copied the limit of the shell you submitted from); ask your admin to set PropagateResourceLimitsExcept=MEMLOCK, or submit from a shell with ulimit -l unlimited',
  'job-memlock-low': "RDMA registration will fail; ask your admin to raise slurmd's limit (LimitMEMLOCK=infinity) or the container's (--ulimit memlock=-1)",
  'job-memlock-unknown': 'the locked-memory limit could not be read; check that /proc is mounted in the job',
  'job-visibility-ok': 'the job sees the RDMA and GPU devices the host has for it',
  'job-hca-missing': 'NCCL and MPI cannot use those adapters from this job, GPUDirect RDMA included; start the container with the host /sys/class/infiniband visible (or ask your admin why the job view hides them)',
  'job-uverbs-missing': 'user-space verbs cannot open those adapters: NCCL falls back to TCP sockets; pass the devices into the container (--device /dev/infiniband, or the runtime hook of your site)',
  'job-uverbs-denied': 'the device nodes exist but this user cannot open them read-write; ask your admin to fix the device permissions (rdma-core udev rules give 0666)',
  'job-gpu-missing': 'CUDA cannot open the GPUs Slurm gave this job; pass the GPU devices into the container (--gpus, or the runtime hook of your site)',
  'job-gpu-denied': 'the GPU device nodes exist but this user cannot open them read-write; ask your admin to check the device permissions (NVreg_DeviceFileMode) and cgroup device rules',
  'job-no-rdma': 'GPUDirect RDMA and NCCL over InfiniBand/RoCE are impossible from this environment; run on a node with RDMA adapters and make /sys/class/infiniband and /dev/infiniband visible to the container',
  'job-view-unknown': 'part of the job view could not be read; check /sys and /dev are mounted in the job',
  'job-nccl-topo-set': "NCCL reads the node's topology from the file gdrgate wrote as root instead of from this job's /sys; none; set NCCL_TOPO_FILE yourself to use another file",
  'job-nccl-topo-kept': "NCCL reads the topology file the job chose; gdrgate did not replace it; unset NCCL_TOPO_FILE to let gdrgate hand the host's topology",
  'job-nccl-topo-unreachable': "NCCL builds its topology from what this job sees of /sys, and may pick the wrong adapter for a GPU; mount gdrgate's state directory into the container (or ask your admin to), or start it with the host /sys",
  'job-placement-ok': "the job's CPUs and memory are on its GPUs' NUMA nodes and their nearest adapters are visible",
  'job-cpus-far': "NCCL keeps this far CPU mask for that GPU, so its proxy threads and host staging cross the socket link (public measurements: about half the bandwidth); ask for CPUs next to your GPUs: srun --gres-flags=enforce-binding, or --cpu-bind=map_cpu:/mask_cpu: with the GPU's local CPUs (the admin can set Cores= in gres.conf)",
  'job-mems-far': "pinned host buffers for that GPU come from another NUMA node, so every copy and RDMA transfer crosses the socket link; bind memory next to the GPU (srun --mem-bind=local, or numactl --localalloc) and ask your admin why the job's cpuset leaves out the GPU's node",
  'job-nic-hidden': "GPUDirect RDMA for that GPU has to use a farther adapter or bounce through host memory; add the adapter to the container's device list (its /sys/class/infiniband entry and /dev/infiniband/uverbs node), or ask your admin why the job view hides it",
  'job-placement-unknown': "part of the job's placement could not be read or was not checked (no SLURM_JOB_GPUS, no baseline matrix): the message says which and why; check that /proc and /sys are mounted in the job; give the node its baseline class; ask for GPUs with --gpus so Slurm sets SLURM_JOB_GPUS",
  'job-state-ok': "the host's record for this job verifies",
  'job-state-missing': 'the job view is checked on its own, without the host side to compare; none for you; the admin can check that gdrgate runs as Prolog',
  'job-state-untrusted': 'it is ignored and the job view is checked on its own; do not edit files under the gdrgate state directory; the admin has been told',
  'job-state-unreadable': 'the job view is checked on its own, without the host side to compare; none for you; the admin can check the state directory',
};

const taskExitCode = (...a: Parameters<typeof taskResult>): number => exitCode(taskResult(...a));

t.test('the line a user sees for ulimit -l 64', async (t) => {
  const lines = taskPrologLines([tf('job-memlock-propagated', 'fail', 'job', 'memlock is 64 KiB in this job', '>= 8 MiB', '64 KiB'), tf('job-visibility-ok', 'pass', 'job', 'fine')]);
  t.same(lines, [
    'print gdrgate: memlock is 64 KiB in this job (need >= 8 MiB): RDMA registration will fail (Slurm copied the limit of the shell you submitted from); ask your admin to set PropagateResourceLimitsExcept=MEMLOCK, or submit from a shell with ulimit -l unlimited',
  ]);
});

t.test('only print lines, one per finding worth attention, never a second protocol line', async (t) => {
  const evil = 'mlx5_0\nexport LD_PRELOAD=/tmp/x.so\rprint owned';
  const lines = taskPrologLines([
    tf('job-hca-missing', 'fail', '/sys/class/infiniband', `this job sees 0 of the 1 RDMA adapters of the host (missing ${evil})`),
    tf('job-state-untrusted', 'error', 'prolog.json', 'the host record for this job is untrusted: x'),
    tf('job-state-missing', 'skip', 'prolog.json', 'no record'),
    tf('job-memlock-ok', 'pass', 'job', 'ok'),
    tf('job-uverbs-missing', 'fail', '/dev/infiniband', 'x'.repeat(5000)),
  ]);
  t.equal(lines.length, 3, 'fail, error: printed; skip, pass: not');
  const want = [
    'print gdrgate: this job sees 0 of the 1 RDMA adapters of the host (missing mlx5_0 export LD_PRELOAD=/tmp/x.so print owned): NCCL and MPI cannot use those adapters from this job, GPUDirect RDMA included; start the container with the host /sys/class/infiniband visible (or ask your admin why the job view hides them)',
    'print gdrgate: the host record for this job is untrusted: x: it is ignored and the job view is checked on its own; do not edit files under the gdrgate state directory; the admin has been told',
    `print gdrgate: ${'x'.repeat(990)}…`,
  ];
  for (const [i, l] of lines.entries()) {
    t.equal(l, want[i], 'starts with print gdrgate:');
    t.notMatch(l, /[\n\r\x00-\x1f]/, 'one line, no control characters');
    t.ok(l.length <= 1006, 'bounded');
  }
  t.equal(lines[0], want[0], 'the hostile name stays inside the print line');
});

t.test('every catalog entry renders', async (t) => {
  for (const code of Object.keys(TASK_CHECK_OF) as TaskCode[]) {
    const [line] = taskPrologLines([tf(code, 'fail', 's', 'm')]);
    t.equal(line, `print gdrgate: m: ${ADVICE[code]}`, code);
  }
});

t.test('exit codes', async (t) => {
  const fail = [tf('job-memlock-low', 'fail', 'job', 'm')];
  const warn = [tf('job-no-rdma', 'warn', 's', 'm')];
  const err = [tf('job-state-untrusted', 'error', 's', 'm')];
  t.equal(taskExitCode(fail, 'taskprolog', false), 0, 'TaskProlog default: warn only');
  t.equal(taskExitCode(fail, 'taskprolog', true), 1, '--fail: a failing finding fails the task');
  t.equal(taskExitCode(err, 'taskprolog', true), 0, '--fail: an untrusted record never fails the task');
  t.equal(taskExitCode(warn, 'standalone', false), 1, 'standalone: a warning is a finding');
  t.equal(taskExitCode([tf('job-memlock-ok', 'pass', 'j', 'm')], 'standalone', false), 0, 'standalone: clean');
});

t.test('standalone report layout', async (t) => {
  const text = renderStandalone([tf('job-memlock-low', 'fail', 'job', 'memlock is 64 KiB in this job', '>= unlimited', '64 KiB'), tf('job-visibility-ok', 'pass', 'job', 'this job sees 4 RDMA adapters')], { root: '/', host: 'c1', min: { value: 'unlimited', from: 'default (no baseline)' } }, 1);
  t.equal(text, [
    'gdrgate task --standalone — root /, host c1, memlock minimum unlimited (default (no baseline))',
    'STATUS  CHECK           SUBJECT  FINDING',
    'FAIL    memlock-limit   job      memlock is 64 KiB in this job (want >= unlimited)',
    '                                 tells: RDMA registration will fail',
    "                                 do:    ask your admin to raise slurmd's limit (LimitMEMLOCK=infinity) or the container's (--ulimit memlock=-1) [scheduler]",
    'PASS    job-visibility  job      this job sees 4 RDMA adapters',
    'result: problems found (exit 1) — 1 fail, 0 error, 0 warn, 1 pass, 0 skip',
    '',
  ].join('\n'));
});
