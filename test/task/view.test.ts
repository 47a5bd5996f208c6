// The job view read through the Host from fixture roots: what a container that hides devices looks like.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import type { Host } from '../../src/host/host.js';
import { SnapshotHost } from '../../src/snapshot/open.js';
import { SnapTree } from '../../src/snapshot/tree.js';
import { accessProbe, type AccessProbe } from '../../src/task/access.js';
import { readJobView } from '../../src/task/view.js';
import { HCAS, jobRoot, UVERBS } from './_roots.js';

const names = (k: { state: string; value?: readonly ({ name: string } | string)[] }): string[] =>
  k.state === 'present' ? (k.value ?? []).map((x) => (typeof x === 'string' ? x : x.name)) : ['?'];

t.test('a full view: 4 HCAs, 4 verbs nodes, NVIDIA nodes, memlock from the tree', async (t) => {
  const root = await jobRoot({ memlockKiB: 64 });
  const host = new FsHost(root);
  const v = await readJobView(host, accessProbe(host));
  t.same(v.self, { state: 'present', value: { soft: 65536, hard: 65536 } }, '/proc/self/limits of the tree');
  t.same(names(v.hcas), HCAS, '/sys/class/infiniband');
  t.same(names(v.verbsClass), UVERBS, '/sys/class/infiniband_verbs');
  t.same(names(v.uverbs), UVERBS, '/dev/infiniband/uverbs* (rdma_cm left out)');
  t.same(names(v.nvidia), ['nvidia-uvm', 'nvidia-uvm-tools', 'nvidia0', 'nvidia1', 'nvidia2', 'nvidia3', 'nvidiactl'], '/dev/nvidia* without the nvidia-caps directory');
  t.ok(v.uverbs.state === 'present' && v.uverbs.value.every((n) => n.access === 'rw'), 'every node read-write (0666)');
});

t.test('a container that hides /dev/infiniband and /sys/class/infiniband', async (t) => {
  const root = await jobRoot({ uverbs: null, hideHcas: true });
  const host = new FsHost(root);
  const v = await readJobView(host, accessProbe(host));
  t.same(v.hcas, { state: 'present', value: [] }, 'absent class directory: an empty list, not unknown');
  t.same(v.uverbs, { state: 'present', value: [] }, 'absent /dev/infiniband: an empty list');
});

t.test('unreadable is not absent', async (t) => {
  const root = await jobRoot();
  const real = new FsHost(root);
  const host: Host = Object.assign(Object.create(real) as FsHost, {
    list: async (p: string) => (p === '/dev/infiniband' ? { ok: false as const, missing: false, reason: 'EACCES: permission denied' } : real.list(p)),
  });
  const v = await readJobView(host, accessProbe(real));
  t.same(v.uverbs, { state: 'unknown', why: '/dev/infiniband: EACCES: permission denied' }, 'EACCES on /dev/infiniband is unknown');
});

t.test('access(2) answers through the root; a denied node is reported as denied', async (t) => {
  const root = await jobRoot();
  const host = new FsHost(root);
  const deny: AccessProbe = { rw: async (p) => (p.endsWith('uverbs2') ? { access: 'denied', why: 'EACCES' } : { access: 'rw' }) };
  const v = await readJobView(host, deny);
  t.same(v.uverbs.state === 'present' && v.uverbs.value.find((n) => n.name === 'uverbs2'), { name: 'uverbs2', kind: 'file', access: 'denied', why: 'EACCES' }, 'the probe decides');
  const probe = accessProbe(host);
  t.same(await probe.rw('/dev/infiniband/uverbs0'), { access: 'rw' }, 'a 0666 node in the tree');
  t.same(await probe.rw('/dev/infiniband/uverbs9'), { access: 'unknown', why: 'ENOENT' }, 'vanished node: unknown, not denied');
  fs.chmodSync(path.join(root, 'dev/infiniband/uverbs0'), 0o444);
  if (process.getuid?.() !== 0) t.same(await probe.rw('/dev/infiniband/uverbs0'), { access: 'denied', why: 'EACCES' }, 'read-only node denied');
  t.same(await accessProbe(new SnapshotHost(root, new SnapTree())).rw('/dev/x'), { access: 'unknown', why: 'a snapshot cannot answer access(2)' }, 'a snapshot cannot answer');
});
