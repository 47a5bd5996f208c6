// The Epilog's look for processes holding a probed GPU or RDMA adapter open (src/epilog/holders.ts, holders-rule.ts):
// over a generated /proc of a two-rail node running the GPU daemons of a DGX/HGX node, escaped job processes, the
// Epilog's own children, fds root may not read; which fds it reads; its bounds; and the rule's parts (UID_MIN, the
// systemd cgroup path).
import t from 'tap';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { readMinors, readVerbsOf } from '../../src/inventory/placement.js';
import { probesConfig } from '../../src/probes/config.js';
import { planProbes } from '../../src/probes/plan.js';
import type { ProbeSpec } from '../../src/probes/types.js';
import { devicesHeld, scanHolders, systemdPath } from '../../src/epilog/holders.js';
import { heldReason, type HolderVerdict, parseUidMin, probedDevices } from '../../src/epilog/holders-rule.js';
import { writeNvidiaGpus } from '../gen/nvidia-procfs.js';
import { cudaFds, DAEMONS, type GenProcess, writeProcesses } from '../gen/proc-pids.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { CountingHost } from '../helpers/counting-host.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';
import { twoRail } from './_env.js';

/** Two rails; GPU 0000:41:00.0 is minor 1 and 0000:82:00.0 minor 0 (minors are not PCI order); uverbsN ↔ mlx5_N. */
async function node(o: { minors?: boolean; verbs?: boolean } = {}): Promise<{ root: string; host: FsHost; units: ProbeSpec[][] }> {
  const root = await scratchDirAsync('gdrgate-holders-', TREE_TMP);
  const n = twoRail(2);
  await buildTree(root, n);
  if (o.minors ?? true) await writeNvidiaGpus(root, n, [1, 0]);
  if (o.verbs ?? true)
    for (const i of [0, 1]) {
      mkdirSync(path.join(root, 'sys/class/infiniband_verbs', `uverbs${i}`), { recursive: true });
      writeFileSync(path.join(root, 'sys/class/infiniband_verbs', `uverbs${i}`, 'ibdev'), `mlx5_${i}\n`);
    }
  const host = new FsHost(root);
  // The probes of mlx5_0 alone: host memory, and GPU memory of its nearest GPU, 0000:41:00.0.
  const units = planProbes(await buildInventory(host), probesConfig({ ibWriteBw: { hcas: ['mlx5_0'] } })!);
  return { root, host, units };
}

const SELF = 4000;
const user = (pid: number, comm: string, cgroup: string, fds: string[], uid = 1000, ppid = 1): GenProcess => ({ pid, ppid, comm, uid, cgroup, fds });
const no = (v: HolderVerdict): string => (v.probe ? 'probe' : heldReason(v, false));

t.test('the GPU daemons never count; a job process that escaped, on the probed GPU or adapter, does, named', async (t) => {
  const { root, host, units } = await node();
  const otherRail = user(3001, 'python3', '/system.slice/slurmstepd.scope/job_41/step_0/user/task_0', cudaFds('/dev/nvidia0', '/dev/infiniband/uverbs1'));
  writeProcesses(root, [...DAEMONS, otherRail]);
  t.equal(no(await devicesHeld(host, units, SELF)), 'probe', 'persistenced, DCGM, fabric manager, dcgm-exporter, and a job on the other rail (nvidiactl and nvidia-uvm say nothing of this GPU)');
  writeProcesses(root, [
    user(3002, 'python3', '/user.slice/user-1000.slice/session-4.scope', cudaFds('/dev/nvidia1')),
    user(3003, 'ib_write_bw', '/system.slice/slurmd.service', ['/dev/null', '/dev/infiniband/rdma_cm', '/dev/infiniband/uverbs0 (deleted)'], 1001),
  ]);
  const scan = await scanHolders(host, probedDevices(units, await readMinors(host), await readVerbsOf(host)), { self: SELF, uidMin: 1000 });
  t.same(scan.done ? scan.holders.map((h) => [h.pid, h.comm, h.uid, h.link, h.device, h.cgroup, h.ancestors]) : scan, [
    [3002, 'python3', 1000, '/dev/nvidia1', 'GPU 0000:41:00.0', '/user.slice/user-1000.slice/session-4.scope', [1]],
    [3003, 'ib_write_bw', 1001, '/dev/infiniband/uverbs0 (deleted)', 'mlx5_0', '/system.slice/slurmd.service', [1]],
  ], 'the holders of the probed nodes that could count, with what decides: the daemons, never counted, are not looked into');
  t.equal(no(await devicesHeld(host, units, SELF)), 'pid 3002 (python3, uid 1000) holds /dev/nvidia1 (GPU 0000:41:00.0); pid 3003 (ib_write_bw, uid 1001) holds /dev/infiniband/uverbs0 (deleted) (mlx5_0): not probed, its traffic would read as a slow path');
});

t.test('a service of the system manager does not count whatever its uid; a task Slurm failed to kill does; this Epilog and its children never', async (t) => {
  const { root, host, units } = await node();
  writeProcesses(root, [
    user(2201, 'nv-hostengine', '/system.slice/nvidia-dcgm.service', cudaFds('/dev/nvidia1'), 1500), // --service-account of a uid above UID_MIN
    user(2202, 'gpu-exporter', '/system.slice/gpu-exporter.service', cudaFds('/dev/nvidia1'), 61234), // DynamicUser=
    user(SELF, 'gdrgate', '/system.slice/slurmd.service', ['/dev/null', '/dev/nvidia1'], 1000, 900),
    user(4001, 'setpriv', '/system.slice/slurmd.service', ['/dev/null'], 0, SELF),
    user(4002, 'ib_write_bw', '/system.slice/slurmd.service', cudaFds('/dev/nvidia1', '/dev/infiniband/uverbs0'), 1000, 4001),
    user(900, 'slurmd', '/system.slice/slurmd.service', ['/dev/null'], 0),
  ]);
  t.equal(no(await devicesHeld(host, units, SELF)), 'probe');
  writeProcesses(root, [user(3004, 'python3', '/system.slice/slurmstepd.scope/job_41/step_0/user/task_0', cudaFds('/dev/nvidia1'), 1000, 3000)]);
  t.equal(no(await devicesHeld(host, units, SELF)), 'pid 3004 (python3, uid 1000) holds /dev/nvidia1 (GPU 0000:41:00.0): not probed, its traffic would read as a slow path');
});

t.test("the fds of a process that could never count are not read: root's or a service's that root may not read never keep the Epilog from probing; a user's do", async (t) => {
  const { root, host, units } = await node();
  writeProcesses(root, [
    { ...DAEMONS[0]!, unreadable: 'fd-links' }, // as this machine's pid 1: readlink(2) of its fds answers root EACCES
    ...DAEMONS.slice(1),
    { pid: 2105, ppid: 1, comm: 'containerd', uid: 0, cgroup: '/system.slice/containerd.service', fds: ['/dev/null', 'socket:[2500]'], unreadable: 'fd-dir' },
    { ...user(2202, 'gpu-exporter', '/system.slice/gpu-exporter.service', cudaFds('/dev/nvidia1'), 61234), unreadable: 'fd-links' }, // DynamicUser=
    { ...user(4001, 'setpriv', '/system.slice/slurmd.service', ['/dev/null'], 1000, SELF), unreadable: 'fd-dir' }, // this Epilog's child
  ]);
  t.equal(no(await devicesHeld(host, units, SELF)), 'probe', 'root, a service above UID_MIN, the Epilog\'s own child');
  writeProcesses(root, [{ ...user(3007, 'python3', '/user.slice/user-1000.slice/session-4.scope', cudaFds('/dev/nvidia1')), unreadable: 'fd-links' }]);
  t.equal(no(await devicesHeld(host, units, SELF)), `which processes hold the probed devices open could not be told (pid 3007 (python3, uid 1000) could hold one: /proc/3007/fd/0: EINVAL: invalid argument, readlink '${root}/proc/3007/fd/0'): not probed`);
  rmSync(path.join(root, 'proc/3007'), { recursive: true });
  writeProcesses(root, [{ ...user(3008, 'python3', '/system.slice/slurmstepd.scope/job_41/step_0/user/task_0', cudaFds('/dev/nvidia1'), 1000, 3000), unreadable: 'fd-dir' }]);
  t.equal(no(await devicesHeld(host, units, SELF)), 'which processes hold the probed devices open could not be told (pid 3008 (python3, uid 1000) could hold one: /proc/3008/fd: ENOTDIR: not a directory, opendir): not probed');
});

t.test("which processes' fds are read: those that could count, not root's nor a system service's", async (t) => {
  const { root, units } = await node();
  const otherRail = user(3001, 'python3', '/system.slice/slurmstepd.scope/job_41/step_0/user/task_0', cudaFds('/dev/nvidia0', '/dev/infiniband/uverbs1'));
  const onProbed = user(3002, 'python3', '/user.slice/user-1000.slice/session-4.scope', cudaFds('/dev/nvidia1'));
  const service = user(2202, 'gpu-exporter', '/system.slice/gpu-exporter.service', cudaFds('/dev/nvidia1'), 61234);
  writeProcesses(root, [...DAEMONS, service, otherRail, onProbed]);
  const host = new CountingHost(new FsHost(root));
  t.equal(no(await devicesHeld(host, units, SELF)), 'pid 3002 (python3, uid 1000) holds /dev/nvidia1 (GPU 0000:41:00.0): not probed, its traffic would read as a slow path');
  const links = host.calls.filter((c) => c.startsWith('readLink /proc/'));
  t.same([...new Set(links.map((c) => Number(c.split('/')[2])))], [3001, 3002], 'fd links read of the two users\' processes only');
  t.equal(links.length, otherRail.fds.length + onProbed.fds.length, 'each of their fds once');
  t.same(host.calls.filter((c) => c.endsWith('/cgroup')).map((c) => c.split('/')[2]), ['2202', '3001', '3002'], 'the cgroup of those whose uid leaves them a candidate');
  const scan = await scanHolders(new FsHost(root), probedDevices(units, await readMinors(host), await readVerbsOf(host)), { self: SELF, uidMin: 1000 });
  t.same(scan.done ? [scan.processes, scan.fds] : scan, [8, otherRail.fds.length + onProbed.fds.length], 'the fds counted are the fds read');
});

t.test('a process whose status cannot be read could be a user\'s: its fds are read, and it counts', async (t) => {
  const { root, units } = await node();
  writeProcesses(root, [...DAEMONS, user(3010, 'python3', '/user.slice/user-1000.slice/session-4.scope', cudaFds('/dev/nvidia1'))]);
  // A directory where the status file would be: read(2) answers EISDIR, an error other than ENOENT, as EACCES would be.
  rmSync(path.join(root, 'proc/3010/status'));
  mkdirSync(path.join(root, 'proc/3010/status'));
  const host = new CountingHost(new FsHost(root));
  const v = await devicesHeld(host, units, SELF);
  t.equal(no(v), 'pid 3010 (python3, user unread: /proc/3010/status: EISDIR: illegal operation on a directory, read) holds /dev/nvidia1 (GPU 0000:41:00.0): not probed, its traffic would read as a slow path');
  t.same([...new Set(host.calls.filter((c) => c.startsWith('readLink /proc/')).map((c) => Number(c.split('/')[2])))], [3010]);
});

t.test('where the minors or the verbs nodes cannot be told, every GPU or verbs node stands for the probed one', async (t) => {
  const { root, host, units } = await node({ minors: false, verbs: false });
  writeProcesses(root, [...DAEMONS, user(3005, 'python3', '/user.slice/user-1000.slice/session-4.scope', cudaFds('/dev/nvidia0', '/dev/infiniband/uverbs1'))]);
  t.equal(no(await devicesHeld(host, units, SELF)), 'pid 3005 (python3, uid 1000) holds /dev/nvidia0 (a GPU: which GPU each /dev/nvidiaN is could not be told); pid 3005 (python3, uid 1000) holds /dev/infiniband/uverbs1 (an RDMA adapter: which adapter each uverbsN is could not be told): not probed, its traffic would read as a slow path');
});

t.test('UID_MIN from login.defs; a user below it (an old site at 500) counts where login.defs says so', async (t) => {
  // Lines of Ubuntu 22.04's /etc/login.defs (shadow 4.8.1).
  const ubuntu = 'UID_MIN\t\t\t 1000\nUID_MAX\t\t\t60000\n# System accounts\n#SYS_UID_MIN\t\t  100\n#SYS_UID_MAX\t\t  999\n# Extra per user uids\nSUB_UID_MIN\t\t   100000\n';
  t.equal(parseUidMin(ubuntu), 1000);
  t.equal(parseUidMin('#UID_MIN 500\nSUB_UID_MIN 100000\n'), null, 'commented out, or another key ending in UID_MIN');
  t.equal(parseUidMin('UID_MIN 0x3e8\n'), null, 'not a decimal number');
  const { root, host, units } = await node();
  writeProcesses(root, [user(3006, 'python3', '/user.slice/user-500.slice/session-2.scope', cudaFds('/dev/nvidia1'), 500)]);
  t.equal(no(await devicesHeld(host, units, SELF)), 'probe', 'below the default 1000: a system account');
  mkdirSync(path.join(root, 'etc'), { recursive: true });
  writeFileSync(path.join(root, 'etc/login.defs'), 'UID_MIN\t\t\t  500\n');
  t.equal(no(await devicesHeld(new FsHost(root), units, SELF)), 'pid 3006 (python3, uid 500) holds /dev/nvidia1 (GPU 0000:41:00.0): not probed, its traffic would read as a slow path');
});

t.test('bounded: too many processes or fds, or past the time, is could not tell (not probed), said', async (t) => {
  const { root, host, units } = await node();
  writeProcesses(root, DAEMONS);
  const limits = { processes: 5, fds: 1_000, ms: 2_000 };
  t.equal(no(await devicesHeld(host, units, SELF, { limits })), 'probe', 'five processes within five');
  t.equal(no(await devicesHeld(host, units, SELF, { limits: { ...limits, processes: 4 } })), 'which processes hold the probed devices open could not be told (more than 4 processes): not probed');
  t.equal(no(await devicesHeld(host, units, SELF, { limits: { ...limits, fds: 30 } })), 'probe', "the daemons' 40 fds are not read, so not counted");
  writeProcesses(root, [user(3009, 'python3', '/user.slice/user-1000.slice/session-4.scope', [...cudaFds(), ...Array<string>(24).fill('/dev/null')])]);
  const six = { ...limits, processes: 6 };
  t.equal(no(await devicesHeld(host, units, SELF, { limits: { ...six, fds: 30 } })), 'which processes hold the probed devices open could not be told (more than 30 open files): not probed', "a user's 30 fds and one");
  t.equal(no(await devicesHeld(host, units, SELF, { limits: { ...six, fds: 31 } })), 'probe');
  let clock = 0;
  const running = (): number => (clock += 700);
  t.equal(no(await devicesHeld(host, units, SELF, { limits: six, now: running })), "which processes hold the probed devices open could not be told (not finished in 2000 ms (2 of 6 processes' status read)): not probed");
  t.equal(heldReason({ probe: false, kind: 'held', why: 'pid 3002 (python3, uid 1000) holds /dev/nvidia1 (GPU 0000:41:00.0)' }, true), 'pid 3002 (python3, uid 1000) holds /dev/nvidia1 (GPU 0000:41:00.0): an Epilog would not probe');
});

t.test('no /proc under the root: could not tell', async (t) => {
  const { root, host, units } = await node();
  rmSync(path.join(root, 'proc'), { recursive: true });
  t.equal(no(await devicesHeld(host, units, SELF)), 'which processes hold the probed devices open could not be told (/proc: ENOENT: no such file or directory, opendir): not probed');
});

t.test("the systemd cgroup path: v2's line, else v1's name=systemd", async (t) => {
  // This machine's /proc/1/cgroup (hybrid: v1 controllers beside the v2 line) and a v1-only one (CentOS 7, Slurm's cgroup/v1).
  t.equal(systemdPath('9:name=systemd:/\n8:pids:/\n7:blkio:/\n6:freezer:/\n5:devices:/\n4:memory:/\n3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n0::/\n'), '/');
  t.equal(systemdPath('11:freezer:/slurm/uid_1000/job_41/step_0\n1:name=systemd:/system.slice/slurmd.service\n'), '/system.slice/slurmd.service');
  t.equal(systemdPath('5:memory:/\n'), null);
});

t.test("a capture's /proc, a directory or a snapshot file, is looked at through its Host: the bundled H200 capture is probed", async (t) => {
  const { openHost } = await import('../../src/host/open.js');
  const match = (link: string): string | null => (/^\/dev\/nvidia\d+$/.test(link) ? 'a GPU' : null);
  // The directory holds /proc/1/limits (slurmd's, as captured), the snapshot /proc/self alone.
  for (const [root, processes] of [['examples/h200-vm', 1], ['examples/h200-vm.tar.gz', 0]] as const) {
    const scan = await scanHolders(await openHost(root), match, { self: 999_999_999, uidMin: 1000 });
    t.same(scan, { done: true, holders: [], processes, fds: 0 }, root);
  }
});

t.test('a node held through several fds is named once; a process gone before its fds were listed holds nothing', async (t) => {
  const { root, host, units } = await node();
  // A CUDA process opens its GPU's node more than once (a context, its memory mappings): one holder of it all the same.
  writeProcesses(root, [...DAEMONS, user(3011, 'python3', '/user.slice/user-1000.slice/session-4.scope', cudaFds('/dev/nvidia1', '/dev/nvidia1', '/dev/infiniband/uverbs0', '/dev/nvidia1'))]);
  t.equal(no(await devicesHeld(host, units, SELF)), 'pid 3011 (python3, uid 1000) holds /dev/nvidia1 (GPU 0000:41:00.0); pid 3011 (python3, uid 1000) holds /dev/infiniband/uverbs0 (mlx5_0): not probed, its traffic would read as a slow path');
  // Its status read, then it ended: /proc/3011/fd is gone (ENOENT), and the look goes on.
  rmSync(path.join(root, 'proc/3011/fd'), { recursive: true });
  t.equal(no(await devicesHeld(host, units, SELF)), 'probe');
});

t.test("rdma_cm and umadN are no adapter's data path, even where which uverbsN is which cannot be told", async (t) => {
  const { root, host, units } = await node({ verbs: false });
  writeProcesses(root, [...DAEMONS, user(3012, 'ucx_info', '/user.slice/user-1000.slice/session-4.scope', ['/dev/null', '/dev/infiniband/rdma_cm', '/dev/infiniband/umad0', '/dev/infiniband/issm0'])]);
  t.equal(no(await devicesHeld(host, units, SELF)), 'probe');
});

t.test('more than four holders: the first four named, the rest counted', async (t) => {
  const { root, host, units } = await node({ minors: false });
  // Ranks of a job that escaped, on both GPUs: with the minors unknown every /dev/nvidiaN stands for the probed GPU.
  const rank = (i: number): GenProcess => user(3100 + i, 'python3', '/system.slice/slurmd.service', cudaFds(`/dev/nvidia${i % 2}`), 1000, 3099);
  const one = (pid: number, n: number): string => `pid ${pid} (python3, uid 1000) holds /dev/nvidia${n} (a GPU: which GPU each /dev/nvidiaN is could not be told)`;
  const four = [one(3100, 0), one(3101, 1), one(3102, 0), one(3103, 1)].join('; ');
  writeProcesses(root, [...DAEMONS, ...[0, 1, 2, 3].map(rank)]);
  t.equal(no(await devicesHeld(host, units, SELF)), `${four}: not probed, its traffic would read as a slow path`, 'four: all named');
  writeProcesses(root, [rank(4)]);
  t.equal(no(await devicesHeld(host, units, SELF)), `${four}; +1 more: not probed, its traffic would read as a slow path`, 'five');
});

t.test('past the time while the fds are read: could not tell, said where', async (t) => {
  const { root, host, units } = await node();
  writeProcesses(root, [...DAEMONS, user(1500, 'python3', '/user.slice/user-1000.slice/session-4.scope', cudaFds('/dev/nvidia1'))]);
  // 250 ms a reading of the clock: the six statuses are read in time, then pid 1 and 1500's fds, then it is late.
  let clock = 0;
  const running = (): number => (clock += 250);
  t.equal(no(await devicesHeld(host, units, SELF, { limits: { processes: 6, fds: 1_000, ms: 2_000 }, now: running })), 'which processes hold the probed devices open could not be told (not finished in 2000 ms (8 fds of 1 processes read)): not probed');
});

t.test("a capture whose /proc is a link out of its root: refused as the Host refuses it, never the machine's /proc listed", async (t) => {
  const root = await scratchDirAsync('gdrgate-holders-', TREE_TMP);
  symlinkSync('/proc', path.join(root, 'proc'));
  const host = new FsHost(root);
  const list = await host.list('/proc');
  t.same(await scanHolders(host, () => 'any', { self: SELF, uidMin: 0 }), { done: false, why: `/proc: ${list.ok ? 'listed' : list.reason}` });
});
