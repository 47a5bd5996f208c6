// Where the job landed, on generated two-socket trees (test/gen/topologies/two-socket-2gpu-2nic.ts: GPU 0000:18:00.0
// and mlx5_0 on node 0, CPUs 0-47,96-143; GPU 0000:9a:00.0 and mlx5_1 on node 1), read through the Host and judged:
// near, far and split masks, minors that are not in PCI order, hidden adapters, and what cannot be read.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import type { BaselinePath } from '../../src/model/baseline.js';
import type { Status } from '../../src/model/finding.js';
import { accessProbe } from '../../src/task/access.js';
import type { TaskCode } from '../../src/task/records.js';
import { judgePlacement, nearestNics } from '../../src/task/placement-judge.js';
import { parseStepGpus, readPlacement, selectGpus, type PlacementView } from '../../src/task/placement.js';
import { readMinors } from '../../src/inventory/placement.js';
import { type GresConf, parseGresConf } from '../../src/parsers/gres-conf.js';
import type { GpuOrder } from '../../src/state/gpu-order.js';
import { slurmGpuOrder } from '../../src/state/slurm-gpus.js';
import { readJobView, type JobView } from '../../src/task/view.js';
import { ABSENT, present } from '../../src/model/fact.js';
import { baselineOf } from '../checks/_trees.js';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { jobRoot, type JobRootOptions } from './_roots.js';

// The NVIDIA module numbered the socket-1 GPU first: minor 0 is 0000:9a:00.0, minor 1 is 0000:18:00.0.
const SWAPPED = [1, 0];
/** Slurm's numbers as a hand-written gres.conf File=/dev/nvidia[0-1] gives them (AutoDetect off): in minor order. */
const BY_MINOR: GpuOrder = { ok: true, how: 'File=/dev/nvidia[0-1]', gpus: [{ bdf: '0000:9a:00.0', minor: 0 }, { bdf: '0000:18:00.0', minor: 1 }] };
const PATHS = (await baselineOf(TWO)).paths;

interface Case {
  name: string;
  gpus: number[] | null;
  cpus?: string;
  mems?: string;
  root?: JobRootOptions;
  patch?: (root: string) => void;
  paths?: readonly BaselinePath[] | null;
  /** The Prolog's order (default BY_MINOR); null: no record, only an agreed order; a string: gres.conf text it is derived from. */
  order?: GpuOrder | null | string;
  /** SLURM_STEP_GPUS. */
  step?: number[];
  want: [Status, TaskCode, string][];
}

const cases: Case[] = [
  { name: 'valid: near (GPU 1 = 0000:18:00.0, CPUs and memory of node 0)', gpus: [1], cpus: '0-7', mems: '0', want: [['pass', 'job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 1=0000:18:00.0"]] },
  { name: 'valid: SMT siblings of node 0 count as near', gpus: [1], cpus: '96-99', mems: '0', want: [['pass', 'job-placement-ok', "this job's CPUs 96-99 and memory nodes 0 are near its GPUs 1=0000:18:00.0"]] },
  {
    name: 'invalid: far (GPU on node 0, CPUs and memory of node 1)',
    gpus: [1],
    cpus: '48-55',
    mems: '1',
    want: [
      ['warn', 'job-cpus-far', "this job's CPUs 48-55 are all away from GPU 1 (0000:18:00.0), whose local CPUs are 0-47,96-143"],
      ['warn', 'job-mems-far', "this job's memory may only come from NUMA node(s) 1, not from node 0 of GPU 1 (0000:18:00.0)"],
    ],
  },
  { name: 'invalid: minor order is not PCI order (minor 0 is the socket-1 GPU)', gpus: [0], cpus: '0-7', mems: '0', want: [['warn', 'job-cpus-far', "this job's CPUs 0-7 are all away from GPU 0 (0000:9a:00.0), whose local CPUs are 48-95,144-191"], ['warn', 'job-mems-far', "this job's memory may only come from NUMA node(s) 0, not from node 1 of GPU 0 (0000:9a:00.0)"]] },
  { name: 'valid (AutoDetect=nvml): SLURM_JOB_GPUS=0 is the PCI-first GPU 0000:18:00.0 (minor 1), next to CPUs 0-7', gpus: [0], cpus: '0-7', mems: '0', order: 'AutoDetect=nvml\n', want: [['pass', 'job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 0=0000:18:00.0"]] },
  { name: 'invalid (AutoDetect=nvml): SLURM_JOB_GPUS=1 is 0000:9a:00.0 (minor 0), away from CPUs 0-7', gpus: [1], cpus: '0-7', mems: '0', order: 'AutoDetect=nvml\n', want: [['warn', 'job-cpus-far', "this job's CPUs 0-7 are all away from GPU 1 (0000:9a:00.0), whose local CPUs are 48-95,144-191"], ['warn', 'job-mems-far', "this job's memory may only come from NUMA node(s) 0, not from node 1 of GPU 1 (0000:9a:00.0)"]] },
  { name: 'valid (File= lines, AutoDetect off): NodeName= lines after Name= lines, so 0 is /dev/nvidia1 = 0000:18:00.0', gpus: [0], cpus: '0-7', mems: '0', order: 'NodeName=n1 Name=gpu File=/dev/nvidia0\nName=gpu File=/dev/nvidia1\n', want: [['pass', 'job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 0=0000:18:00.0"]] },
  { name: 'invalid (AutoDetect=nvidia): SLURM_JOB_GPUS=0 is minor 0, 0000:9a:00.0, away from CPUs 0-7', gpus: [0], cpus: '0-7', mems: '0', order: 'AutoDetect=nvidia\n', want: [['warn', 'job-cpus-far', "this job's CPUs 0-7 are all away from GPU 0 (0000:9a:00.0), whose local CPUs are 48-95,144-191"], ['warn', 'job-mems-far', "this job's memory may only come from NUMA node(s) 0, not from node 1 of GPU 0 (0000:9a:00.0)"]] },
  { name: 'skip (AutoDetect=rsmi): not derived: never a guess', gpus: [0], cpus: '0-7', mems: '0', order: 'AutoDetect=rsmi\n', want: [['skip', 'job-placement-unknown', "not checked: which GPUs Slurm's SLURM_JOB_GPUS=0 are cannot be told: gres.conf AutoDetect=rsmi: Slurm's numbering is not derived for it"]] },
  { name: 'skip: no Prolog record and minors not in PCI order', gpus: [0], cpus: '0-7', mems: '0', order: null, want: [['skip', 'job-placement-unknown', "not checked: which GPUs Slurm's SLURM_JOB_GPUS=0 are cannot be told: no record, and this node's device minors are not in PCI bus order (0000:18:00.0=minor 1, 0000:9a:00.0=minor 0)"]] },
  { name: "valid: the task's SLURM_STEP_GPUS=1 (of the job's 0,1) is judged, not the job's far GPU 0", gpus: [0, 1], step: [1], cpus: '0-7', mems: '0', want: [['pass', 'job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 1=0000:18:00.0"]] },
  { name: 'invalid: SLURM_STEP_GPUS not among the job\'s GPUs is ignored: the job\'s GPUs are judged', gpus: [1], step: [0], cpus: '0-7', mems: '0', want: [['pass', 'job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 1=0000:18:00.0"]] },
  { name: 'valid: split mask over both GPUs (NCCL intersects per GPU)', gpus: [0, 1], cpus: '40-55', mems: '0-1', want: [['pass', 'job-placement-ok', "this job's CPUs 40-55 and memory nodes 0-1 are near its GPUs 0=0000:9a:00.0, 1=0000:18:00.0"]] },
  { name: 'invalid: two GPUs, CPUs on one socket: only the far GPU is named', gpus: [0, 1], cpus: '0-15', mems: '0', want: [['warn', 'job-cpus-far', "this job's CPUs 0-15 are all away from GPU 0 (0000:9a:00.0), whose local CPUs are 48-95,144-191"], ['warn', 'job-mems-far', "this job's memory may only come from NUMA node(s) 0, not from node 1 of GPU 0 (0000:9a:00.0)"]] },
  { name: 'invalid: memory alone bound away', gpus: [1], cpus: '0-7', mems: '1', want: [['warn', 'job-mems-far', "this job's memory may only come from NUMA node(s) 1, not from node 0 of GPU 1 (0000:18:00.0)"]] },
  {
    name: "invalid: the container hides GPU 1's PIX adapter mlx5_0 (/sys/class/infiniband entry gone)",
    gpus: [1],
    cpus: '0-7',
    mems: '0',
    patch: (r) => fs.rmSync(path.join(r, 'sys/class/infiniband/mlx5_0')),
    want: [['fail', 'job-nic-hidden', 'this job cannot use mlx5_0 (no /sys/class/infiniband/mlx5_0), the PIX adapter next to GPU 1 (0000:18:00.0)']],
  },
  { name: "invalid: mlx5_0 visible, its verbs node missing", gpus: [1], cpus: '0-7', mems: '0', root: { uverbs: ['uverbs1'] }, want: [['fail', 'job-nic-hidden', 'this job cannot use mlx5_0 (no usable /dev/infiniband/uverbs0), the PIX adapter next to GPU 1 (0000:18:00.0)']] },
  { name: 'valid: the far adapter hidden is not this GPU\'s', gpus: [1], cpus: '0-7', mems: '0', patch: (r) => fs.rmSync(path.join(r, 'sys/class/infiniband/mlx5_1')), want: [['pass', 'job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 1=0000:18:00.0"]] },
  {
    name: 'skip: no baseline readable: the adapter next to the GPU is hidden, and what was not checked is said (never a silent ok)',
    gpus: [1], cpus: '0-7', mems: '0', paths: null, patch: (r) => fs.rmSync(path.join(r, 'sys/class/infiniband/mlx5_0')),
    want: [['pass', 'job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 1=0000:18:00.0 (the adapters next to them: see the skip lines)"], ['skip', 'job-placement-unknown', 'the adapters next to GPU 1 (0000:18:00.0) were not checked: no baseline class (its GPU↔NIC matrix says which they are)']],
  },
  { name: 'skip: no SLURM_JOB_GPUS, a far-bound job: placement not checked, and said so', gpus: null, cpus: '48-55', mems: '1', want: [['skip', 'job-placement-unknown', "not checked: no SLURM_JOB_GPUS (the job asked for no GPU, or Slurm did not say which it has), so this job's CPUs, memory and adapters are not compared with its GPUs"]] },
  { name: 'skip: SLURM_JOB_GPUS names a minor no information file has', gpus: [5], cpus: '0-7', mems: '0', want: [['skip', 'job-placement-unknown', "Slurm's GPU 5 (SLURM_JOB_GPUS=5) is not among the 2 GPUs of this node (File=/dev/nvidia[0-1])"]] },
  { name: 'skip: no record, no /proc/driver/nvidia/gpus (module not loaded or hidden)', order: null, gpus: [1], cpus: '0-7', mems: '0', patch: (r) => fs.rmSync(path.join(r, 'proc/driver/nvidia/gpus'), { recursive: true }), want: [['skip', 'job-placement-unknown', "not checked: which GPUs Slurm's SLURM_JOB_GPUS=1 are cannot be told: no /proc/driver/nvidia/gpus: the GPUs cannot be mapped to PCI addresses"]] },
  { name: 'skip: no record, an information file without its Device Minor line', order: null, gpus: [1], cpus: '0-7', mems: '0', patch: (r) => fs.writeFileSync(path.join(r, 'proc/driver/nvidia/gpus/0000:18:00.0/information'), 'Model: \t\t NVIDIA H100\n'), want: [['skip', 'job-placement-unknown', "not checked: which GPUs Slurm's SLURM_JOB_GPUS=1 are cannot be told: /proc/driver/nvidia/gpus/0000:18:00.0/information: no Device Minor line"]] },
  { name: 'skip: /proc/self/status without Cpus_allowed_list', gpus: [1], cpus: '0-7', mems: '0', patch: (r) => fs.writeFileSync(path.join(r, 'proc/self/status'), 'Name:\tbash\n'), want: [['skip', 'job-placement-unknown', '/proc/self/status: no Cpus_allowed_list line']] },
  {
    name: 'skip: the job cannot see /sys/bus/pci/devices/<bdf> (a container without /sys/bus/pci): nothing compared, never a pass',
    gpus: [0], cpus: '0-7', mems: '0',
    patch: (r) => fs.rmSync(path.join(r, 'sys/bus/pci/devices/0000:9a:00.0')),
    want: [['skip', 'job-placement-unknown', "/sys/bus/pci/devices/0000:9a:00.0/local_cpulist: not in this job's /sys (ENOENT): the GPU's local CPUs cannot be compared"], ['skip', 'job-placement-unknown', "/sys/bus/pci/devices/0000:9a:00.0/numa_node: not in this job's /sys"]],
  },
  {
    name: "skip: the verbs node of the GPU's PIX adapter is a dangling link (access(2): ENOENT): neither usable nor denied",
    gpus: [1], cpus: '0-7', mems: '0',
    patch: (r) => { const u = path.join(r, 'dev/infiniband/uverbs0'); fs.rmSync(u); fs.symlinkSync('/nonexistent/uverbs0', u); },
    want: [['pass', 'job-placement-ok', "this job's CPUs 0-7 and memory nodes 0 are near its GPUs 1=0000:18:00.0 (the adapters next to them: see the skip lines)"], ['skip', 'job-placement-unknown', 'whether this job can use the adapters next to GPU 1 (0000:18:00.0) could not be told: access(2) of /dev/infiniband/uverbs0 (ENOENT) answered neither yes nor no']],
  },
  {
    name: "invalid: mlx5_0 hidden from /sys/class/infiniband, its verbs node (named by infiniband_verbs/uverbs0/ibdev) a dangling link: hidden, never an untold access",
    gpus: [1], cpus: '0-7', mems: '0',
    patch: (r) => { fs.rmSync(path.join(r, 'sys/class/infiniband/mlx5_0')); const u = path.join(r, 'dev/infiniband/uverbs0'); fs.rmSync(u); fs.symlinkSync('/nonexistent/uverbs0', u); },
    want: [['fail', 'job-nic-hidden', 'this job cannot use mlx5_0 (no /sys/class/infiniband/mlx5_0), the PIX adapter next to GPU 1 (0000:18:00.0)']],
  },
  { name: 'skip: a GPU whose local_cpulist is garbage', gpus: [1], cpus: '0-7', mems: '0', patch: (r) => fs.writeFileSync(path.join(r, 'sys/bus/pci/devices/0000:18:00.0/local_cpulist'), 'x\n'), want: [['skip', 'job-placement-unknown', '/sys/bus/pci/devices/0000:18:00.0/local_cpulist: unexpected cpulist part "x"']] },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const root = await jobRoot({ node: TWO, minors: SWAPPED, status: { cpus: c.cpus ?? '0-191', mems: c.mems ?? '0-1' }, ...c.root }, t.testdir());
    c.patch?.(root);
    const host = new FsHost(root);
    const minors = await readMinors(host);
    // slurm.conf's Gres=gpu:C as the node's: C its GPUs.
    const count = minors.state === 'present' ? minors.value.size : 0;
    const order = typeof c.order === 'string' ? slurmGpuOrder({ gres: present((parseGresConf(c.order) as { value: GresConf }).value), gresPath: 'gres.conf', minors, node: 'n1', asked: present({ count, untyped: true, types: [] }) }) : c.order === undefined ? BY_MINOR : c.order;
    const [place, view] = await Promise.all([readPlacement(host, selectGpus(c.gpus, c.step ?? null, true), order, 'no record'), readJobView(host, accessProbe(host))]);
    const f = judgePlacement({ place, view, paths: c.paths === undefined ? PATHS : c.paths });
    t.same(f.map((x) => [x.status, x.code]), c.want.map(([s, code]) => [s, code]), 'findings');
    c.want.forEach(([, , message], i) => t.equal(f[i]?.message, message, `message: ${f[i]?.message}`));
    t.ok(f.every((x) => x.check === 'job-placement'), 'all job-placement findings');
  });
}

t.test('a GPU whose local CPUs were not read (absent) is a skip, never a pass: nothing was compared', async (t) => {
  const place = {
    minors: present(new Map([[0, '0000:9a:00.0']])),
    sel: { ids: [0], from: 'SLURM_JOB_GPUS' },
    order: { ok: true, how: 'test', gpus: [{ bdf: '0000:9a:00.0', minor: 0 }] },
    gpus: new Map([[0, { id: 0, minor: 0, bdf: '0000:9a:00.0', localCpuList: null, localCpus: ABSENT, numa: ABSENT }]]),
    allowed: present({ cpus: [[0, 7]], cpuList: '0-7', mems: [[0, 0]], memList: '0' }),
    verbsOf: present(new Map()),
  } as unknown as PlacementView;
  const view = { self: ABSENT, hcas: present([]), verbsClass: present([]), uverbs: present([]), nvidia: present([]) } as unknown as JobView;
  const f = judgePlacement({ place, view, paths: [] });
  t.same(f.map((x) => [x.status, x.code, x.message]), [['skip', 'job-placement-unknown', 'the local CPUs of GPU 0 (0000:9a:00.0) could not be read (no /sys/bus/pci/devices/0000:9a:00.0/local_cpulist in this job)'], ['skip', 'job-placement-unknown', "the adapters next to GPU 0 (0000:9a:00.0) were not checked: the baseline class's GPU↔NIC matrix has no row for 0000:9a:00.0"]]);
});

t.test('a selection that names no GPU (SLURM_JOB_GPUS set but empty) is said, never silence: nothing was judged', async (t) => {
  // selectGpus gives null for an empty list today; the judge must not depend on that.
  t.equal(selectGpus([], null, true), null, 'selectGpus: no ids, no selection');
  // SLURM_STEP_GPUS=NoDevFiles or set empty (srun --gres=none): the step has no GPU, whatever the job holds.
  const step = (SLURM_STEP_GPUS: string | undefined, more: { SLURM_GPUS_ON_NODE?: string; SLURM_STEP_ID?: string } = {}): number[] | null => parseStepGpus({ SLURM_STEP_GPUS, ...more });
  t.strictSame([step('NoDevFiles'), step(''), step(undefined), step('1,0')], [[], [], null, [1, 0]]);
  // Unset in an ordinary step with SLURM_GPUS_ON_NODE (Slurm 22.05 on unsets both for a step given no GPU): none.
  t.strictSame([step(undefined, { SLURM_STEP_ID: '0' }), step(undefined, { SLURM_STEP_ID: '4294967279' })], [[], []], 'steps 0 and 0xffffffef');
  t.strictSame(
    [step(undefined, { SLURM_STEP_ID: '0', SLURM_GPUS_ON_NODE: '2' }), step(undefined, { SLURM_STEP_ID: '4294967290' }), step(undefined, { SLURM_STEP_ID: '4294967291' }), step(undefined, { SLURM_STEP_ID: '-5' }), step(undefined, { SLURM_STEP_ID: 'batch' }), step(undefined, { SLURM_STEP_ID: '01' })],
    [null, null, null, null, null, null],
    "the job's variables (SLURM_GPUS_ON_NODE set), the interactive and batch steps, and what is not a step number: not told",
  );
  t.strictSame(selectGpus([0, 1], [], true), { ids: [], from: 'SLURM_STEP_GPUS' }, 'a step given no GPU uses none');
  t.strictSame([selectGpus(null, [], true), selectGpus([], [], false)], [null, null], 'a job with no GPU: said as the job\'s (no SLURM_JOB_GPUS), not as the step\'s');
  t.strictSame(selectGpus([0, 1], [1], true), { ids: [1], from: 'SLURM_STEP_GPUS' });
  t.strictSame(selectGpus([0, 1], [2], true), { ids: [0, 1], from: 'SLURM_JOB_GPUS' }, "never a GPU not the job's");
  const place = { minors: ABSENT, sel: { ids: [], from: 'SLURM_JOB_GPUS' }, order: { ok: true, how: 'test', gpus: [] }, gpus: new Map(), allowed: ABSENT, verbsOf: ABSENT } as unknown as PlacementView;
  const view = { self: ABSENT, hcas: present([]), verbsClass: present([]), uverbs: present([]), nvidia: present([]) } as unknown as JobView;
  t.same(judgePlacement({ place, view, paths: null }).map((x) => [x.status, x.code, x.subject]), [['skip', 'job-placement-unknown', 'job']]);
  const stepNone = { ...place, sel: selectGpus([0, 1], [], true) } as PlacementView;
  t.same(judgePlacement({ place: stepNone, view, paths: null }).map((x) => [x.status, x.code, x.message]), [['skip', 'job-placement-unknown', 'not checked: Slurm gave this step no GPU (as for srun --gres=none), so its CPUs, memory and adapters are not compared with GPUs']]);
});

t.test('nearest adapters: the best class when PIX or PXB, none beyond', async (t) => {
  t.same(nearestNics(PATHS, '0000:18:00.0'), { cls: 'PIX', nics: ['mlx5_0'] }, 'the baseline of the generated tree: mlx5_0 PIX, mlx5_1 SYS');
  t.same(nearestNics([{ gpu: 'g', nic: 'a', class: 'PXB' }, { gpu: 'g', nic: 'b', class: 'PXB' }, { gpu: 'g', nic: 'c', class: 'SYS' }], 'g'), { cls: 'PXB', nics: ['a', 'b'] });
  t.equal(nearestNics([{ gpu: 'g', nic: 'a', class: 'NODE' }], 'g'), null, 'no adapter through a switch: nothing to require');
  t.equal(nearestNics(PATHS, '0000:00:06.0'), null, 'a GPU the baseline does not know');
});
