// The Prolog's record of the host's adapters (src/state/prolog.ts buildPrologState, src/task/judge.ts): every adapter is
// recorded, one without a PCI function (a software device: rxe, siw) with bdf null, so its uverbs node stays known;
// under enroot's view (only the adapter next to the job's GPU shown) such an adapter next to no GPU is not failed.
import t from 'tap';
import { ABSENT, present } from '../../src/model/fact.js';
import type { Inventory } from '../../src/model/inventory.js';
import { buildPrologState } from '../../src/state/prolog.js';
import { asPrologState, type StateRead } from '../../src/state/read.js';
import { judge } from '../../src/task/judge.js';
import { selectGpus } from '../../src/task/placement.js';
import type { PlacementView } from '../../src/task/placement.js';
import type { DevNode, JobView } from '../../src/task/view.js';

const MiB8 = 8 * 1024 * 1024;
const dev = (names: string[]): JobView['uverbs'] => ({ state: 'present', value: names.map((name): DevNode => ({ name, kind: 'char', access: 'rw' })) });
const GPU0 = '0000:18:00.0';
const state = (adapters: { name: string; bdf: string | null; uverbs: string | null }[]): StateRead => ({
  status: 'trusted',
  state: {
    job: '7', uid: 1001, node: 'n1', time: '', memlock: { who: 'slurmd', soft: MiB8, hard: MiB8 }, memlockMin: MiB8,
    hcas: ['mlx5_0', 'mlx5_1', 'rxe0'], uverbs: ['uverbs0', 'uverbs1', 'uverbs2'], nvidia: ['nvidia-uvm', 'nvidia0', 'nvidiactl'], gpus: [GPU0], jobGpus: [0], adapters,
  },
});
const view: JobView = {
  self: { state: 'present', value: { soft: MiB8, hard: MiB8 } },
  hcas: { state: 'present', value: ['mlx5_0'] },
  verbsClass: { state: 'present', value: ['uverbs0'] },
  uverbs: dev(['uverbs0']),
  nvidia: dev(['nvidia-uvm', 'nvidia0', 'nvidiactl']),
};
const place = {
  minors: ABSENT, sel: selectGpus([0], null, true), order: { ok: true, how: 't', gpus: [{ bdf: GPU0, minor: 0 }] },
  gpus: new Map([[0, { id: 0, minor: 0, bdf: GPU0, localCpuList: '0-7', localCpus: present([[0, 7]]), numa: present(0) }]]),
  allowed: present({ cpus: [[0, 7]], mems: [[0, 0]], cpuList: '0-7', memList: '0' }),
  verbsOf: present(new Map([['mlx5_0', 'uverbs0']])),
} as unknown as PlacementView;
const paths = [{ gpu: GPU0, nic: 'mlx5_0', class: 'PIX' as const }, { gpu: GPU0, nic: 'mlx5_1', class: 'SYS' as const }];
const refNics = new Map([['mlx5_0', '0000:19:00.0'], ['mlx5_1', '0000:9b:00.0']]);
const fails = (s: StateRead): string[] => judge({ view, rlimitMemlock: undefined, state: s, min: { value: MiB8, from: 't' }, placement: { place, paths, refNics } }).filter((x) => x.status === 'fail').map((x) => `${x.code}: ${x.message}`);

t.test('an adapter without a PCI function, next to no GPU, hidden by the container: not failed', async (t) => {
  const recorded = [{ name: 'mlx5_0', bdf: '0000:19:00.0', uverbs: 'uverbs0' }, { name: 'mlx5_1', bdf: '0000:9b:00.0', uverbs: 'uverbs1' }, { name: 'rxe0', bdf: null, uverbs: 'uverbs2' }];
  t.strictSame(fails(state(recorded)), []);
  const pass = judge({ view, rlimitMemlock: undefined, state: state(recorded), min: { value: MiB8, from: 't' }, placement: { place, paths, refNics } }).find((x) => x.code === 'job-visibility-ok');
  t.equal(pass?.message, 'this job sees 1 RDMA adapters, 1 verbs devices, 3 NVIDIA device nodes; not mlx5_1, rxe0, next to none of its GPUs (next to them: mlx5_0)');
});

t.test('its uverbs node unknown to the record (an older one left such adapters out): failed, as nothing says whose it is', async (t) => {
  t.strictSame(fails(state([{ name: 'mlx5_0', bdf: '0000:19:00.0', uverbs: 'uverbs0' }, { name: 'mlx5_1', bdf: '0000:9b:00.0', uverbs: 'uverbs1' }])), [
    'job-uverbs-missing: this job sees 1 of the 3 verbs devices of the host (missing /dev/infiniband/uverbs2, of the adapters next to its GPUs or of one the record does not place)',
  ]);
});

t.test('the record keeps every adapter, one without a PCI function with bdf null, and reads back trusted in shape', async (t) => {
  const inv = { memlock: [], gpus: [], nics: [{ name: 'mlx5_0', bdf: present('0000:19:00.0') }, { name: 'rxe0', bdf: ABSENT }] } as unknown as Inventory;
  const st = buildPrologState({ job: '7', uid: 1001, node: 'n1', memlockMin: null, jobGpus: [0], inv, devInfiniband: ['uverbs0', 'uverbs1'], dev: [], verbsOf: new Map([['mlx5_0', 'uverbs0'], ['rxe0', 'uverbs1']]), now: new Date(0) });
  t.strictSame(st.adapters, [{ name: 'mlx5_0', bdf: '0000:19:00.0', uverbs: 'uverbs0' }, { name: 'rxe0', bdf: null, uverbs: 'uverbs1' }]);
  const back = asPrologState(JSON.parse(JSON.stringify(st)));
  t.strictSame(typeof back === 'string' ? back : back.adapters, st.adapters, 'asPrologState takes it');
  t.equal(asPrologState({ ...st, adapters: [{ name: 'x', bdf: 7, uverbs: null }] }), 'payload field adapters is malformed');
  const vf = buildPrologState({ job: '7', uid: 1001, node: 'n1', memlockMin: null, jobGpus: [0], inv, devInfiniband: ['uverbs0', 'uverbs1'], dev: [], verbsOf: new Map([['mlx5_0', 'uverbs0']]), physfn: new Map([['0000:19:00.0', '0000:19:00.1']]), now: new Date(0) });
  t.strictSame(vf.adapters, [{ name: 'mlx5_0', bdf: '0000:19:00.0', uverbs: 'uverbs0', pf: '0000:19:00.1' }, { name: 'rxe0', bdf: null, uverbs: null }], "a VF's PF recorded, nothing for the others");
  t.strictSame(asPrologState(JSON.parse(JSON.stringify(vf))), vf, 'read back');
  t.equal(asPrologState({ ...st, adapters: [{ name: 'x', bdf: '0000:19:00.0', uverbs: null, pf: 3 }] }), 'payload field adapters is malformed', 'a pf that is no string');
});
