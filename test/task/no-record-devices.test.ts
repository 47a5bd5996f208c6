// Without a trusted Prolog record, which /dev/nvidia* nodes a job is failed for: Slurm's ConstrainDevices (cgroup v1's
// devices list, v2's BPF program) leaves other jobs' /dev/nvidiaN in /dev and makes access(2) answer EPERM for them,
// as the trusted path already knows; only the job's own GPU nodes and the control nodes are the job's to open.
import t from 'tap';
import { ABSENT } from '../../src/model/fact.js';
import type { GpuOrder } from '../../src/state/gpu-order.js';
import type { StateRead } from '../../src/state/read.js';
import { judge, type JudgeInput } from '../../src/task/judge.js';
import { selectGpus } from '../../src/task/placement.js';
import type { DevNode, JobView } from '../../src/task/view.js';

const MiB8 = 8 * 1024 * 1024;
const node = (name: string, deny: readonly string[]): DevNode => (deny.includes(name) ? { name, kind: 'char', access: 'denied', why: 'EPERM' } : { name, kind: 'char', access: 'rw' });
const view = (deny: readonly string[]): JobView => ({
  self: { state: 'present', value: { soft: MiB8, hard: MiB8 } },
  hcas: { state: 'present', value: ['mlx5_0'] },
  verbsClass: { state: 'present', value: ['uverbs0'] },
  uverbs: { state: 'present', value: [node('uverbs0', [])] },
  nvidia: { state: 'present', value: ['nvidia-uvm', 'nvidia0', 'nvidia1', 'nvidiactl'].map((n) => node(n, deny)) },
});
const ORDER: GpuOrder = { ok: true, how: 'test', gpus: [{ bdf: '0000:18:00.0', minor: 0 }, { bdf: '0000:2a:00.0', minor: 1 }] };
const placement = (job: number[] | null, order: GpuOrder = ORDER): JudgeInput['placement'] => ({ place: { minors: ABSENT, sel: selectGpus(job, null, false), order, gpus: new Map(), allowed: ABSENT, verbsOf: ABSENT }, paths: null });
const MISSING: StateRead = { status: 'missing', why: 'no dir' };
/** The findings of the job's view (placement's own are placement.test.ts's), as [status, code, message]. */
const seen = (deny: readonly string[], p: JudgeInput['placement'], state: StateRead | null = MISSING): [string, string, string][] =>
  judge({ view: view(deny), rlimitMemlock: undefined, state, min: { value: MiB8, from: 'test' }, placement: p })
    .filter((f) => f.check === 'job-visibility')
    .map((f) => [f.status, f.code, f.message]);

t.test("no record, SLURM_JOB_GPUS=1: another job's /dev/nvidia0 denied by the device cgroup is no finding", async (t) => {
  t.same(seen(['nvidia0'], placement([1])), [['pass', 'job-visibility-ok', 'this job sees 1 RDMA adapters, 1 verbs devices, 4 NVIDIA device nodes']]);
  t.same(seen(['nvidia0'], placement([1]), { status: 'untrusted', why: 'signature does not verify' }), [['pass', 'job-visibility-ok', 'this job sees 1 RDMA adapters, 1 verbs devices, 4 NVIDIA device nodes']], 'an untrusted record alike');
});

t.test("no record: the job's own GPU node or a control node denied still fails", async (t) => {
  t.same(seen(['nvidia0', 'nvidia1'], placement([1])), [['fail', 'job-gpu-denied', 'this job cannot open /dev/nvidia1 read-write (EPERM)']]);
  t.same(seen(['nvidiactl'], placement([1])), [['fail', 'job-gpu-denied', 'this job cannot open /dev/nvidiactl read-write (EPERM)']]);
});

t.test("no record, the minors of Slurm's GPUs unknown: a denied GPU node could be another job's, a skip", async (t) => {
  t.same(seen(['nvidia0'], placement([1], { ok: false, why: 'minors not in PCI order' })), [
    ['skip', 'job-view-unknown', "whether /dev/nvidia0 (denied: EPERM) is among this job's GPUs cannot be told (not judged): minors not in PCI order"],
  ]);
});

t.test('no record, a job with no GPU on a GPU node: the GPU nodes its cgroup denies are no finding', async (t) => {
  t.same(seen(['nvidia0', 'nvidia1'], placement(null)), [['pass', 'job-visibility-ok', 'this job sees 1 RDMA adapters, 1 verbs devices, 4 NVIDIA device nodes']]);
});

t.test('standalone outside Slurm (no GPU list): every denied node is still said, as before', async (t) => {
  t.same(seen(['nvidia0'], placement(null), null), [['fail', 'job-gpu-denied', 'this job cannot open /dev/nvidia0 read-write (EPERM)']]);
});
