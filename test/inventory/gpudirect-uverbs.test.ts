// ib_uverbs loaded or not: in /proc/modules or /sys/module's listing, its /sys/module directory there, or (built in:
// CONFIG_INFINIBAND_USER_ACCESS=y, neither listed nor in /sys/module) its class's uverbs<N> entries. A look at
// that directory that failed (EACCES, EIO; not ENOENT: a module loaded between the listing and the look) was "not
// loaded", a warning on a node that may have it: now unknown, a skip. On the generated HGX without ib_uverbs listed,
// through a Host whose look at /sys/module/ib_uverbs fails.
import t from 'tap';
import type { Host, ReadResult, StatInfo } from '../../src/host/host.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { hgx, runCheck } from '../checks/_trees.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';
import { promises as fsp } from 'node:fs';
import { buildSnapshot } from '../../src/snapshot/build.js';
import { parseSnapshot } from '../../src/snapshot/open.js';

const root = scratchDir('gdrgate-uverbs-', TREE_TMP);
const n = hgx();
n.modules = ['nvidia_uvm', 'nvidia_modeset', 'nvidia', 'mlx5_ib', 'ib_core', 'mlx5_core'];
await buildTree(root, n);

/** FsHost with the look at /sys/module/ib_uverbs failing as `reason` says (missing: ENOENT). */
function looking(reason: string | null, missing = false): Host {
  const fs = new FsHost(root);
  return new Proxy(fs, {
    get(target, prop, recv) {
      if (prop === 'lstat' && reason !== null)
        return (p: string): Promise<ReadResult<StatInfo>> => (p === '/sys/module/ib_uverbs' ? Promise.resolve({ ok: false, missing, reason }) : target.lstat(p));
      const v = Reflect.get(target, prop, recv) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
const uverbs = async (h: Host) => {
  const inv = await buildInventory(h);
  return { fact: inv.gpudirect.ibUverbs, findings: runCheck('gpudirect-mechanism', inv, null).filter((f) => f.subject === 'ib_uverbs').map((f) => `${f.status} ${f.code}: ${f.message}`) };
};

t.test('built in (its /sys/module directory there, not in /proc/modules): loaded, nothing said', async (t) => {
  await fsp.mkdir(`${root}/sys/module/ib_uverbs`);
  t.same(await uverbs(looking(null)), { fact: { state: 'present', value: true }, findings: [] });
  await fsp.rmdir(`${root}/sys/module/ib_uverbs`);
});

t.test('the look failing (EIO): unknown, a skip that says why; never "not loaded"', async (t) => {
  t.same(await uverbs(looking('EIO: i/o error, lstat')), {
    fact: { state: 'unknown', why: '/sys/module/ib_uverbs: EIO: i/o error, lstat' },
    findings: ['skip mechanism-unknown: whether ib_uverbs is loaded could not be told: /sys/module/ib_uverbs: EIO: i/o error, lstat'],
  });
});

t.test('not there (ENOENT) and not listed: not loaded, the warning as before', async (t) => {
  t.same(await uverbs(looking('ENOENT: no such file or directory', true)), { fact: { state: 'present', value: false }, findings: ['warn uverbs-missing: RDMA adapters present but ib_uverbs not loaded'] });
});

t.test('built in without a /sys/module directory: /sys/class/infiniband_verbs/uverbs0 shows it running, nothing said', async (t) => {
  // As on a node: the class entry a link to the device's node under its adapter (here a virtual one).
  await fsp.mkdir(`${root}/sys/devices/virtual/infiniband_verbs/uverbs0`, { recursive: true });
  await fsp.mkdir(`${root}/sys/class/infiniband_verbs`, { recursive: true });
  await fsp.symlink('../../devices/virtual/infiniband_verbs/uverbs0', `${root}/sys/class/infiniband_verbs/uverbs0`);
  await fsp.writeFile(`${root}/sys/class/infiniband_verbs/abi_version`, '6\n');
  t.same(await uverbs(looking('ENOENT: no such file or directory', true)), { fact: { state: 'present', value: true }, findings: [] });
  const snap = await buildSnapshot(new FsHost(root), false, { commands: false, now: new Date(0) });
  t.same(await uverbs(parseSnapshot('uverbs.tar.gz', snap.gz)), { fact: { state: 'present', value: true }, findings: [] }, "a snapshot's replay says the same (the class is on its allowlist)");
  await fsp.rm(`${root}/sys/class/infiniband_verbs/uverbs0`);
  t.same(await uverbs(looking('ENOENT: no such file or directory', true)), { fact: { state: 'present', value: false }, findings: ['warn uverbs-missing: RDMA adapters present but ib_uverbs not loaded'] }, 'the class with abi_version alone: no verbs device, not loaded');
  await fsp.rm(`${root}/sys/class/infiniband_verbs`, { recursive: true });
  await fsp.rm(`${root}/sys/devices/virtual/infiniband_verbs`, { recursive: true });
});
