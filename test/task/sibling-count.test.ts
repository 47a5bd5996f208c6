// A job with two GPUs that holds one VF of the card next to GPU 0 and nothing of GPU 1's card (the SR-IOV functions of
// test/gen/sriov.ts on test/gen/topologies/two-socket-2gpu-2nic.ts): the fail names only GPU 1's card, and the count of
// adapters it sees leaves out those it has through another function of a card as well as those it misses.
import t from 'tap';
import { ABSENT, present } from '../../src/model/fact.js';
import type { StateRead } from '../../src/state/read.js';
import type { RecordedAdapter } from '../../src/state/types.js';
import { judge } from '../../src/task/judge.js';
import { selectGpus, type PlacementView } from '../../src/task/placement.js';
import type { DevNode, JobView } from '../../src/task/view.js';
import { withVfs } from '../gen/sriov.js';
import { allDevices } from '../gen/sysfs-tree.js';
import { GPUS, node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';

const MiB8 = 8 * 1024 * 1024;
const VF = withVfs(TWO, 2);
const ib = allDevices(VF).flatMap((d) => (d.ib ? [{ name: d.ib.name, bdf: d.bdf, pf: d.physfn }] : []));
// The record as the Prolog keeps it: each adapter's PCI function, its verbs node, a VF's PF.
const adapters: RecordedAdapter[] = ib.map((a, k) => ({ name: a.name, bdf: a.bdf, uverbs: `uverbs${k}`, ...(a.pf ? { pf: a.pf } : {}) }));
const uverbsOf = new Map(adapters.map((a) => [a.name, a.uverbs!] as const));
const state: StateRead = {
  status: 'trusted',
  state: {
    job: '7', uid: 1001, node: 'n1', time: '', memlock: { who: 'slurmd', soft: MiB8, hard: MiB8 }, memlockMin: MiB8,
    hcas: adapters.map((a) => a.name), uverbs: adapters.map((a) => a.uverbs!), nvidia: ['nvidia-uvm', 'nvidia0', 'nvidia1', 'nvidiactl'], gpus: [...GPUS], jobGpus: [0, 1], adapters,
  },
};
// The class's matrix: each GPU PIX to every function of the card beside it (as baseline capture records them), SYS to the other's.
const card = (bdf: string): string => bdf.slice(0, 10);
const paths = GPUS.flatMap((gpu) => ib.map((a) => ({ gpu, nic: a.name, class: card(a.bdf) === card(gpu === GPUS[0] ? '0000:19:00.0' : '0000:9b:00.0') ? ('PIX' as const) : ('SYS' as const) })));
const refNics = new Map(ib.map((a) => [a.name, a.bdf] as const));
const gpu = (id: number, minor: number, bdf: string, cpus: string, numa: number) => [id, { id, minor, bdf, localCpuList: cpus, localCpus: present([[numa * 8, numa * 8 + 7]]), numa: present(numa) }] as const;
const place = {
  minors: ABSENT, sel: selectGpus([0, 1], null, true), order: { ok: true, how: 't', gpus: [{ bdf: GPUS[0], minor: 0 }, { bdf: GPUS[1], minor: 1 }] },
  gpus: new Map([gpu(0, 0, GPUS[0], '0-7', 0), gpu(1, 1, GPUS[1], '8-15', 1)]),
  allowed: present({ cpus: [[0, 15]], mems: [[0, 1]], cpuList: '0-15', memList: '0-1' }),
  verbsOf: present(new Map([['mlx5_3', uverbsOf.get('mlx5_3')!]])),
} as unknown as PlacementView;
const dev = (names: string[]): JobView['uverbs'] => ({ state: 'present', value: names.map((name): DevNode => ({ name, kind: 'char', access: 'rw' })) });
const view: JobView = {
  self: { state: 'present', value: { soft: MiB8, hard: MiB8 } },
  hcas: { state: 'present', value: ['mlx5_3'] },
  verbsClass: { state: 'present', value: [uverbsOf.get('mlx5_3')!] },
  uverbs: dev([uverbsOf.get('mlx5_3')!]),
  nvidia: dev(['nvidia-uvm', 'nvidia0', 'nvidia1', 'nvidiactl']),
};

t.test('one VF of GPU 0\'s card, nothing of GPU 1\'s: sees 1 of 6, missing only GPU 1\'s card', async (t) => {
  t.same(ib.map((a) => `${a.name}@${a.bdf}${a.pf ? `<${a.pf}` : ''}`), ['mlx5_0@0000:19:00.0', 'mlx5_2@0000:19:00.1<0000:19:00.0', 'mlx5_3@0000:19:00.2<0000:19:00.0', 'mlx5_1@0000:9b:00.0', 'mlx5_4@0000:9b:00.1<0000:9b:00.0', 'mlx5_5@0000:9b:00.2<0000:9b:00.0'], 'the generated functions');
  const f = judge({ view, rlimitMemlock: undefined, state, min: { value: MiB8, from: 't' }, placement: { place, paths, refNics } });
  t.same(f.filter((x) => x.status === 'fail').map((x) => [x.code, x.subject, x.message]), [
    ['job-hca-missing', '/sys/class/infiniband', 'this job sees 1 of the 6 RDMA adapters of the host (missing mlx5_1, mlx5_4, mlx5_5, next to its GPUs)'],
    ['job-uverbs-missing', '/dev/infiniband', 'this job sees 1 of the 6 verbs devices of the host (missing /dev/infiniband/uverbs3, /dev/infiniband/uverbs4, /dev/infiniband/uverbs5, of the adapters next to its GPUs or of one the record does not place)'],
    ['job-nic-hidden', 'GPU 1 (0000:9a:00.0)', 'this job cannot use mlx5_1 (no /sys/class/infiniband/mlx5_1), mlx5_4 (no /sys/class/infiniband/mlx5_4), mlx5_5 (no /sys/class/infiniband/mlx5_5), the PIX adapters next to GPU 1 (0000:9a:00.0)'],
  ]);
});
