// The job's view against the host's record: table of valid and invalid cases, each with the exact findings.
import t from 'tap';
import type { Status } from '../../src/model/finding.js';
import type { StateRead } from '../../src/state/read.js';
import type { PrologState } from '../../src/state/types.js';
import type { TaskCode } from '../../src/task/records.js';
import { judge, resolveMin, type JudgeInput, type MemlockMin } from '../../src/task/judge.js';
import { ABSENT } from '../../src/model/fact.js';
import type { GpuOrder } from '../../src/state/gpu-order.js';
import { selectGpus } from '../../src/task/placement.js';
import { jobMemlock, parseRlimitEnv } from '../../src/task/memlock.js';
import type { DevNode, JobView } from '../../src/task/view.js';

const MiB8 = 8 * 1024 * 1024;
const dev = (names: string[], denied: string[] = []): JobView['uverbs'] => ({
  state: 'present',
  value: names.map((name): DevNode => (denied.includes(name) ? { name, kind: 'char', access: 'denied', why: 'EACCES' } : { name, kind: 'char', access: 'rw' })),
});
const healthyView = (over: Partial<JobView> = {}): JobView => ({
  self: { state: 'present', value: { soft: MiB8, hard: MiB8 } },
  hcas: { state: 'present', value: ['mlx5_0', 'mlx5_1'] },
  verbsClass: { state: 'present', value: ['uverbs0', 'uverbs1'] },
  uverbs: dev(['uverbs0', 'uverbs1']),
  nvidia: dev(['nvidia-uvm', 'nvidia0', 'nvidia1', 'nvidiactl']),
  ...over,
});
const host = (over: Partial<PrologState> = {}): StateRead => ({
  status: 'trusted',
  state: { job: '7', uid: 1001, node: 'n1', time: '', memlock: { who: 'slurmd', soft: MiB8, hard: MiB8 }, memlockMin: MiB8, hcas: ['mlx5_0', 'mlx5_1'], uverbs: ['uverbs0', 'uverbs1'], nvidia: ['nvidia-uvm', 'nvidia0', 'nvidia1', 'nvidiactl'], gpus: ['0000:18:00.0', '0000:2a:00.0'], jobGpus: [1], ...over },
});
const MIN: MemlockMin = { value: MiB8, from: 'test' };
/** The record's GPUs through Slurm's order (index i = minor i here): which /dev/nvidiaN nodes are the job's. */
const ORDER: GpuOrder = { ok: true, how: 'test', gpus: [{ bdf: '0000:18:00.0', minor: 0 }, { bdf: '0000:2a:00.0', minor: 1 }] };
const placementFor = (s: StateRead | null, order: GpuOrder = ORDER, step: number[] | null = null): JudgeInput['placement'] => {
  const job = s?.status === 'trusted' ? s.state.jobGpus : null;
  const sel = selectGpus(job, step, true);
  return { place: { minors: ABSENT, sel, order, gpus: new Map(), allowed: ABSENT, verbsOf: ABSENT }, paths: null };
};

interface Case {
  name: string;
  view?: Partial<JobView>;
  env?: string;
  state?: StateRead | null;
  min?: MemlockMin;
  /** Every finding that is not a pass, as [status, code, message]. */
  want: [Status, TaskCode, string][];
}

const cases: Case[] = [
  { name: 'valid: slurmd limit, nothing propagated, host view intact', state: host(), want: [] },
  { name: 'invalid: ulimit -l 64 propagated from the submitting shell', env: '65536', state: host(), want: [['fail', 'job-memlock-propagated', 'memlock is 64 KiB in this job']] },
  { name: 'invalid: srun --propagate=MEMLOCK (value prefixed with U)', env: 'U65536', state: host(), want: [['fail', 'job-memlock-propagated', 'memlock is 64 KiB in this job']] },
  { name: 'valid: unlimited propagated above the hard limit keeps slurmd limit', env: '18446744073709551615', state: host(), want: [] },
  { name: 'valid: propagated value equal to the minimum', env: String(MiB8), state: host(), want: [] },
  { name: 'invalid: slurmd itself low (no propagation)', view: { self: { state: 'present', value: { soft: 65536, hard: 65536 } } }, state: host(), want: [['fail', 'job-memlock-low', 'memlock is 64 KiB in this job']] },
  { name: 'invalid: low hard limit', view: { self: { state: 'present', value: { soft: MiB8, hard: 1024 * 1024 } } }, env: undefined, state: host(), want: [['fail', 'job-memlock-low', 'memlock is 8 MiB (hard 1 MiB) in this job']] },
  { name: 'skip: malformed SLURM_RLIMIT_MEMLOCK', env: '64k', state: host(), want: [['skip', 'job-memlock-unknown', 'SLURM_RLIMIT_MEMLOCK="64k" is not a number']] },
  { name: 'skip: /proc/self/limits unreadable', view: { self: { state: 'unknown', why: 'EACCES' } }, state: host(), want: [['skip', 'job-memlock-unknown', 'memlock not readable: EACCES']] },
  { name: 'invalid: container hides /sys/class/infiniband', view: { hcas: { state: 'present', value: [] } }, state: host(), want: [['fail', 'job-hca-missing', 'this job sees 0 of the 2 RDMA adapters of the host (missing mlx5_0, mlx5_1)']] },
  { name: 'invalid: no /dev/infiniband in the job', view: { uverbs: dev([]) }, state: host(), want: [['fail', 'job-uverbs-missing', 'this job sees 0 of the 2 verbs devices of the host (missing /dev/infiniband/uverbs0, /dev/infiniband/uverbs1)']] },
  {
    name: 'invalid: neither adapters nor verbs nodes: two fails, in the order they were judged (adapters, then verbs nodes)',
    view: { hcas: { state: 'present', value: [] }, uverbs: dev([]) },
    state: host(),
    want: [['fail', 'job-hca-missing', 'this job sees 0 of the 2 RDMA adapters of the host (missing mlx5_0, mlx5_1)'], ['fail', 'job-uverbs-missing', 'this job sees 0 of the 2 verbs devices of the host (missing /dev/infiniband/uverbs0, /dev/infiniband/uverbs1)']],
  },
  { name: 'invalid: one uverbs node fewer than the host', view: { uverbs: dev(['uverbs0']) }, state: host(), want: [['fail', 'job-uverbs-missing', 'this job sees 1 of the 2 verbs devices of the host (missing /dev/infiniband/uverbs1)']] },
  { name: 'invalid: uverbs node not writable by the user', view: { uverbs: dev(['uverbs0', 'uverbs1'], ['uverbs1']) }, state: host(), want: [['fail', 'job-uverbs-denied', 'this job cannot open /dev/infiniband/uverbs1 read-write (EACCES)']] },
  { name: "invalid: the job's GPU node hidden (SLURM_JOB_GPUS=1)", view: { nvidia: dev(['nvidia-uvm', 'nvidia0', 'nvidiactl']) }, state: host(), want: [['fail', 'job-gpu-missing', 'this job sees 2 of the 3 NVIDIA device nodes of its GPUs (missing /dev/nvidia1)']] },
  { name: "valid: another job's GPU hidden is fine", view: { nvidia: dev(['nvidia-uvm', 'nvidia1', 'nvidiactl']) }, state: host(), want: [] },
  { name: 'valid: job asked for no GPU, none visible', view: { nvidia: dev([]) }, state: host({ jobGpus: null }), want: [] },
  { name: 'valid: nvidia-uvm not loaded at Prolog time (not in the host record): the job is not asked for it', view: { nvidia: dev(['nvidia0', 'nvidia1', 'nvidiactl']) }, state: host({ nvidia: ['nvidia0', 'nvidia1', 'nvidiactl'] }), want: [] },
  { name: 'valid: a verbs node the host record lacks (uverbs9, come after the Prolog) denied is not judged: only the recorded ones', view: { uverbs: dev(['uverbs0', 'uverbs1', 'uverbs9'], ['uverbs9']) }, state: host(), want: [] },
  { name: 'invalid: GPU node denied', view: { nvidia: dev(['nvidia-uvm', 'nvidia1', 'nvidiactl'], ['nvidia1']) }, state: host(), want: [['fail', 'job-gpu-denied', 'this job cannot open /dev/nvidia1 read-write (EACCES)']] },
  {
    name: "skip: the job's GPU node is a dangling link (access(2): ENOENT): not counted as usable",
    view: { nvidia: { state: 'present', value: [{ name: 'nvidia-uvm', kind: 'char', access: 'rw' }, { name: 'nvidiactl', kind: 'char', access: 'rw' }, { name: 'nvidia1', kind: null, access: 'unknown', why: 'ENOENT' }] } },
    state: host(),
    want: [['skip', 'job-view-unknown', 'whether this job can open /dev/nvidia1 (ENOENT) read-write could not be told: access(2) answered neither yes nor no']],
  },
  { name: 'error: untrusted record, then self-consistency only', view: { uverbs: dev([]) }, state: { status: 'untrusted', why: 'signature does not verify' }, want: [['fail', 'job-uverbs-missing', 'the kernel has verbs devices uverbs0, uverbs1 (/sys/class/infiniband_verbs) but this job has no /dev/infiniband node for them'], ['error', 'job-state-untrusted', 'the host record for this job is untrusted: signature does not verify']] },
  { name: 'skip: no record (Prolog not installed)', state: { status: 'missing', why: 'no dir' }, want: [['skip', 'job-state-missing', 'no host record for this job: no dir']] },
  {
    name: 'skip: no record under Slurm and no RDMA adapter: the missing record is said, the standalone "no RDMA" warning is not given',
    view: { hcas: { state: 'present', value: [] }, verbsClass: { state: 'present', value: [] }, uverbs: dev([]) },
    state: { status: 'missing', why: 'no dir' },
    want: [['skip', 'job-state-missing', 'no host record for this job: no dir']],
  },
  { name: 'skip: /sys/class/infiniband_verbs unreadable: said, never passed over', view: { verbsClass: { state: 'unknown', why: '/sys/class/infiniband_verbs: EACCES' } }, state: host(), want: [['skip', 'job-view-unknown', '/sys/class/infiniband_verbs: EACCES']] },
  { name: 'skip: record unreadable', state: { status: 'unreadable', why: 'EACCES' }, want: [['skip', 'job-state-unreadable', 'the host record for this job could not be read: EACCES']] },
  { name: 'standalone: no RDMA adapter at all', view: { hcas: { state: 'present', value: [] }, verbsClass: { state: 'present', value: [] }, uverbs: dev([]) }, state: null, want: [['warn', 'job-no-rdma', 'no RDMA adapter is visible (/sys/class/infiniband is empty or absent)']] },
  { name: 'standalone: sysfs shows verbs devices, /dev does not', view: { uverbs: dev([]) }, state: null, want: [['fail', 'job-uverbs-missing', 'the kernel has verbs devices uverbs0, uverbs1 (/sys/class/infiniband_verbs) but this job has no /dev/infiniband node for them']] },
  { name: 'standalone: unknown parts are skips, never passes', view: { hcas: { state: 'unknown', why: '/sys/class/infiniband: EIO' } }, state: null, want: [['skip', 'job-view-unknown', '/sys/class/infiniband: EIO']] },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const st = c.state === undefined ? host() : c.state;
    const f = judge({ view: healthyView(c.view), rlimitMemlock: c.env, state: st, min: c.min ?? MIN, placement: placementFor(st) });
    // The placement's own findings are placement.test.ts's: here only which GPU nodes it names.
    const notPass = f.filter((x) => x.status !== 'pass' && x.check !== 'job-placement');
    t.same(notPass.map((x) => [x.status, x.code]), c.want.map(([s, code]) => [s, code]), 'findings');
    c.want.forEach(([, , message], i) => t.equal(notPass[i]?.message, message, `message: ${notPass[i]?.message}`));
    if (!c.want.length) t.ok(f.some((x) => x.code === 'job-memlock-ok') && f.some((x) => x.code === 'job-visibility-ok'), 'memlock and visibility pass');
  });
}

t.test('memlock minimum: best source first', async (t) => {
  t.same(resolveMin(host(), 1), { value: MiB8, from: 'baseline class (recorded by the Prolog)' }, 'the class the Prolog judged with');
  t.same(resolveMin(host({ memlockMin: null }), 1024), { value: 1024, from: 'baseline class' }, 'else the baseline the user can read');
  t.same(resolveMin(host({ memlockMin: null }), null), { value: MiB8, from: "slurmd's limit (recorded by the Prolog)" }, "else slurmd's recorded limit");
  t.same(resolveMin({ status: 'untrusted', why: '' }, null), { value: 'unlimited', from: 'default (no baseline)' }, 'never an untrusted record');
});

t.test('SLURM_RLIMIT_MEMLOCK', async (t) => {
  t.same(parseRlimitEnv('65536'), { ok: true, value: 65536 });
  t.same(parseRlimitEnv('U65536'), { ok: true, value: 65536 });
  t.same(parseRlimitEnv('18446744073709551615'), { ok: true, value: 'unlimited' });
  t.equal(parseRlimitEnv('-1').ok, false);
  t.equal(parseRlimitEnv('').ok, false);
  t.same(jobMemlock({ soft: MiB8, hard: 'unlimited' }, ''), { ok: true, value: { soft: MiB8, hard: 'unlimited', source: 'self', env: null } }, 'set but empty: no propagated value, own limit');
  t.same(jobMemlock({ soft: MiB8, hard: MiB8 }, undefined), { ok: true, value: { soft: MiB8, hard: MiB8, source: 'self', env: null } }, 'no env: own limit');
  t.same(jobMemlock({ soft: MiB8, hard: 'unlimited' }, '18446744073709551615'), { ok: true, value: { soft: 'unlimited', hard: 'unlimited', source: 'propagated', env: '18446744073709551615' } }, 'unlimited under an unlimited hard limit');
  // Above the hard limit (slurmstepd/ulimits.c _set_limit): slurm.conf's value is lowered to the hard limit; the
  // user's (`srun --propagate`, U) fails setrlimit() and the limit stays slurmd's soft one.
  const MiB64 = 64 * 1024 * 1024;
  t.same(jobMemlock({ soft: MiB8, hard: MiB64 }, '18446744073709551615'), { ok: true, value: { soft: MiB64, hard: MiB64, source: 'propagated', env: '18446744073709551615' } }, 'conf: soft = hard');
  t.same(jobMemlock({ soft: MiB8, hard: MiB64 }, 'U18446744073709551615'), { ok: true, value: { soft: MiB8, hard: MiB64, source: 'self', env: 'U18446744073709551615' } }, 'user: unchanged');
  t.same(jobMemlock({ soft: MiB8, hard: MiB64 }, String(2 * MiB8)), { ok: true, value: { soft: 2 * MiB8, hard: MiB64, source: 'propagated', env: String(2 * MiB8) } }, 'above the soft limit, under the hard one: set as it is');
  t.same(jobMemlock({ soft: MiB8, hard: MiB64 }, 'U' + String(MiB64)), { ok: true, value: { soft: MiB64, hard: MiB64, source: 'propagated', env: 'U' + String(MiB64) } }, "the user's, equal to the hard limit: set");
  t.same(jobMemlock({ soft: MiB8, hard: MiB64 }, String(MiB64 + 1)), { ok: true, value: { soft: MiB64, hard: MiB64, source: 'propagated', env: String(MiB64 + 1) } }, 'one byte over: the hard limit');
});

t.test("SLURM_STEP_GPUS=1 of the job's 0,1: only the task's GPU node is required (a step container holds only its own)", async (t) => {
  const st = host({ jobGpus: [0, 1] });
  const view = healthyView({ nvidia: dev(['nvidia-uvm', 'nvidia1', 'nvidiactl']) });
  const f = judge({ view, rlimitMemlock: undefined, state: st, min: MIN, placement: placementFor(st, ORDER, [1]) });
  t.same(f.filter((x) => x.check !== 'job-placement' && x.status !== 'pass').map((x) => x.code), [], 'no job-gpu-missing');
  const job = judge({ view, rlimitMemlock: undefined, state: st, min: MIN, placement: placementFor(st) });
  t.same(job.filter((x) => x.check !== 'job-placement' && x.status !== 'pass').map((x) => [x.code, x.message]), [['job-gpu-missing', 'this job sees 3 of the 4 NVIDIA device nodes of its GPUs (missing /dev/nvidia0)']], 'without SLURM_STEP_GPUS: the job\'s GPUs');
});

t.test("Slurm's GPU 1 is minor 0 (PCI order): /dev/nvidia0 is the node required, never /dev/nvidia1", async (t) => {
  const st = host({ jobGpus: [1] });
  const swapped: GpuOrder = { ok: true, how: 'AutoDetect=nvml', gpus: [{ bdf: '0000:18:00.0', minor: 1 }, { bdf: '0000:2a:00.0', minor: 0 }] };
  const f = judge({ view: healthyView({ nvidia: dev(['nvidia-uvm', 'nvidia0', 'nvidiactl']) }), rlimitMemlock: undefined, state: st, min: MIN, placement: placementFor(st, swapped) });
  t.same(f.filter((x) => x.check !== 'job-placement' && x.status !== 'pass').map((x) => x.code), [], 'nvidia0 present: nothing missing');
  const unknown = judge({ view: healthyView(), rlimitMemlock: undefined, state: st, min: MIN, placement: placementFor(st, { ok: false, why: 'minors not in PCI order' }) });
  t.same(unknown.filter((x) => x.check !== 'job-placement' && x.status !== 'pass').map((x) => [x.code, x.message]), [['job-view-unknown', "which /dev/nvidiaN nodes are this job's GPUs cannot be told (not checked): minors not in PCI order"]], 'order unknown: said, never guessed');
});
