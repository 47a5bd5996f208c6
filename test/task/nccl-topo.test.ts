// When the TaskProlog hands a job NCCL_TOPO_FILE: the decision case by case, and the job's view read from real trees.
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { oneLine } from '../../src/task/render.js';
import { decideNcclTopo, type DeviceView, isOwnValue, ncclTopoLines, readDeviceViews } from '../../src/task/nccl-topo.js';
import type { PrologState } from '../../src/state/types.js';
import { allDevices, buildTree, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as V100 } from '../gen/topologies/v100sxm2-4gpu-4nic-pairs.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const G0 = '0000:1a:00.0';
const G1 = '0000:1b:00.0';
const N0 = '0000:5e:00.0';
const HOST: Record<string, string> = {
  [G0]: '/sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:00.0/0000:1a:00.0',
  [G1]: '/sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:01.0/0000:1b:00.0',
  [N0]: '/sys/devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0',
};
const PATH = '/var/lib/gdrgate/job-7/nccl-topo.xml';
const state = (topo = true): PrologState => ({
  job: '7', uid: 1000, node: 'gpu001', time: '2026-12-03T09:00:00.000Z', memlock: null, memlockMin: null,
  hcas: ['mlx5_0'], uverbs: ['uverbs0'], nvidia: ['nvidia0', 'nvidia1'], gpus: [G0, G1], jobGpus: [0],
  ...(topo ? { ncclTopo: { file: 'nccl-topo.xml', paths: HOST } } : {}),
});
const same: DeviceView = { kind: 'same' };
const views = (over: Record<string, DeviceView> = {}): Map<string, DeviceView> => new Map(Object.keys(HOST).map((b) => [b, over[b] ?? same]));
const base = { state: state(), path: PATH, jobGpus: [G0], views: views(), readable: true, env: undefined };

t.test('nothing to hand: no file recorded, or the job sees what the host sees', async (t) => {
  t.same(decideNcclTopo({ ...base, state: null, views: views({ [G0]: { kind: 'missing' } }) }), { export: null, finding: null, why: null }, 'no trusted record');
  t.same(decideNcclTopo({ ...base, state: state(false), views: views({ [G0]: { kind: 'missing' } }) }), { export: null, finding: null, why: null }, 'class without ncclTopo');
  t.same(decideNcclTopo(base), { export: null, finding: null, why: null }, 'full view');
  t.same(decideNcclTopo({ ...base, views: views({ [N0]: { kind: 'unknown', why: 'EACCES' } }) }).export, null, 'could not tell: no export');
  t.same(decideNcclTopo({ ...base, views: views({ [G1]: { kind: 'moved', path: '/sys/devices/pci0000:1b/0000:1b:00.0' } }) }).export, null, 'another job\'s GPU moved: not this job\'s concern');
});

t.test('a flattened or partial view: exported, with the reason', async (t) => {
  const flat = decideNcclTopo({ ...base, views: views({ [G0]: { kind: 'moved', path: '/sys/devices/pci0000:1a/0000:1a:00.0' }, [N0]: { kind: 'missing' } }) });
  t.equal(flat.export, PATH);
  t.equal(flat.finding?.code, 'job-nccl-topo-set');
  t.equal(flat.finding?.status, 'pass');
  const why = `gdrgate: this job's /sys shows 2 devices of its GPU/RDMA path unlike the host (elsewhere: 0000:1a:00.0; hidden: 0000:5e:00.0; 0000:1a:00.0 is at /sys/devices/pci0000:1a/0000:1a:00.0, on the host at ${HOST[G0]}): NCCL_TOPO_FILE set to the host's topology (${PATH}) so that NCCL sees the node's real GPU-NIC paths`;
  t.equal(flat.why, why);
  t.same(ncclTopoLines(flat, oneLine, true), [`print ${why}`, `export NCCL_TOPO_FILE=${PATH}`], 'the step\'s voice: reason then export');
  t.same(ncclTopoLines(flat, oneLine, false), [`export NCCL_TOPO_FILE=${PATH}`], 'every other task: the export alone');
  t.equal(decideNcclTopo({ ...base, jobGpus: null, views: views({ [G1]: { kind: 'missing' } }) }).export, PATH, 'job GPUs unknown: every GPU counts');
  t.equal(decideNcclTopo({ ...base, env: PATH, views: views({ [N0]: { kind: 'missing' } }) }).export, PATH, 'our own value, inherited from the batch step: exported again');
  // A job submitted from a task of job 6 (sbatch carries its environment): job 6's file is not this job's choice.
  const other = decideNcclTopo({ ...base, env: '/var/lib/gdrgate/job-6/nccl-topo.xml', views: views({ [N0]: { kind: 'missing' } }) });
  t.same([other.export, other.finding?.code], [PATH, 'job-nccl-topo-set'], "another job's gdrgate file: replaced by this job's");
});

t.test("gdrgate's own value, for any job: the state directory, a job's directory, the file's name", async (t) => {
  for (const [env, own] of [
    [PATH, true],
    ['/var/lib/gdrgate/job-6/nccl-topo.xml', true],
    ['/var/lib/gdrgate/job-4294967295/nccl-topo.xml', true],
    ['/var/lib/gdrgate/job-06/nccl-topo.xml', false],
    ['/var/lib/gdrgate/job-x/nccl-topo.xml', false],
    ['/var/lib/gdrgate/job-6/other.xml', false],
    ['/var/lib/other/job-6/nccl-topo.xml', false],
    ['/var/lib/gdrgate/job-6/sub/nccl-topo.xml', false],
    ['/home/u/job-6/nccl-topo.xml', false],
    ['nccl-topo.xml', false],
    ['', false],
  ] as const) t.equal(isOwnValue(env, PATH), own, JSON.stringify(env));
});

t.test("never over the job's own NCCL_TOPO_FILE; said when the file cannot be reached", async (t) => {
  const moved = views({ [G0]: { kind: 'missing' } });
  const kept = decideNcclTopo({ ...base, views: moved, env: '/home/u/topo.xml' });
  t.equal(kept.export, null);
  t.equal(kept.finding?.code, 'job-nccl-topo-kept');
  t.equal(kept.why, "gdrgate: this job's /sys shows a device of its GPU/RDMA path unlike the host (hidden: 0000:1a:00.0); NCCL_TOPO_FILE left as the job set it");
  t.equal(decideNcclTopo({ ...base, views: moved, env: '' }).export, null, 'set empty is still set');
  const gone = decideNcclTopo({ ...base, views: moved, readable: false });
  t.same([gone.export, gone.finding?.code, gone.finding?.status, gone.why], [null, 'job-nccl-topo-unreachable', 'warn', null]);
  t.equal(decideNcclTopo({ ...base, views: moved, path: '/var/lib/gdr gate/job-7/nccl-topo.xml' }).export, null, 'a path with a blank is never exported');
});

/** The same devices, each alone on a root bus of its own: what a container's flattened /sys shows. */
function flattened(n: GenNode): GenNode {
  const ends = allDevices(n).filter((d) => d.kind === 'gpu' || d.kind === 'nic').map((d): GenDevice => ({ ...d, children: [] }));
  return { ...n, hostBridges: ends.map((d) => ({ domainBus: d.bdf.slice(0, 7), numaNode: 0, devices: [d] })) };
}

t.test('the job view read from trees: the host tree is the same, a flattened one moved, a missing device hidden', async (t) => {
  const host = await scratchDirAsync('gdrgate-jobview-', TREE_TMP);
  await buildTree(host, V100);
  const hostHost = new FsHost(host);
  const ends = allDevices(V100).filter((d) => d.kind === 'gpu' || d.kind === 'nic').map((d) => d.bdf);
  const paths: Record<string, string> = {};
  for (const b of ends) {
    const r = await hostHost.realPath(`/sys/bus/pci/devices/${b}`);
    if (r.ok) paths[b] = r.value;
  }
  const gpus = allDevices(V100).filter((d) => d.kind === 'gpu').map((d) => d.bdf);
  const st: PrologState = { ...state(), gpus, ncclTopo: { file: 'nccl-topo.xml', paths } };
  const full = await readDeviceViews(hostHost, st, null);
  t.same([...full.values()].map((v) => v.kind), ends.map(() => 'same'));
  const flat = await scratchDirAsync('gdrgate-jobview-', TREE_TMP);
  await buildTree(flat, flattened(V100));
  const fv = await readDeviceViews(new FsHost(flat), st, null);
  t.same([...fv.entries()].map(([b, v]) => [b, v.kind === 'moved' ? v.path : v.kind]).sort(), ends.map((b) => [b, `/sys/devices/pci${b.slice(0, 7)}/${b}`]).sort());
  const { rmSync } = await import('node:fs');
  rmSync(`${flat}/sys/bus/pci/devices/${ends[0]}`);
  t.same((await readDeviceViews(new FsHost(flat), st, null)).get(ends[0]!), { kind: 'missing' });
});
