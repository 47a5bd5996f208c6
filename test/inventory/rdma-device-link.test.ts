// An RDMA adapter's PCI function (its `device` link) as a Fact: no PCI parent is absent, an unreadable link unknown and only ever a skip.
import t from 'tap';
import { promises as fsp, realpathSync } from 'node:fs';
import path from 'node:path';
import { captureClass } from '../../src/baseline/capture.js';
import { presence } from '../../src/compare/devices.js';
import { response } from '../../src/compare/types.js';
import { compareView } from '../../src/compare/view.js';
import type { Finding } from '../../src/model/finding.js';
import { CHECKS } from '../../src/checks/index.js';
import { buildSummary } from '../../src/fleet/summary.js';
import { validate } from '../helpers/schema.js';
import { baselineOf, hgx, inventoryCached, inventoryOf, P0, type Patch, patches, put, softRoce } from '../checks/_trees.js';

/** The adapter's own directory under its PCI function, where the kernel puts the `device` link. */
const ibDir = (root: string, name: string): string => realpathSync(path.join(root, 'sys/class/infiniband', name));

/** `device` made a link the Host cannot resolve: it loops on itself (ELOOP), as an unreadable link stands for any other error. */
const deviceLoop = (name: string): Patch => async (root) => {
  const link = path.join(ibDir(root, name), 'device');
  await fsp.rm(link, { force: true });
  await fsp.symlink('device', link);
};

/**
 * Soft-iWARP on the loopback (rdma link add siw_lo type siw netdev lo): the loopback has no parent, so siw takes the
 * netdev itself as the ib device's parent (drivers/infiniband/sw/siw/siw_main.c siw_device_create): `device` resolves
 * to /sys/devices/virtual/net/lo, a device that is no PCI function.
 */
const siwLoopback: Patch = patches(put('sys/devices/virtual/net/lo/type', '772\n'), put('sys/devices/virtual/infiniband/siw_lo/node_type', '4: RNIC\n'), async (root) => {
  await fsp.symlink('../../../net/lo', path.join(root, 'sys/devices/virtual/infiniband/siw_lo/device'));
  await fsp.mkdir(path.join(root, 'sys/class/infiniband'), { recursive: true });
  await fsp.symlink('../../devices/virtual/infiniband/siw_lo', path.join(root, 'sys/class/infiniband/siw_lo'));
});

const run = (inv: Awaited<ReturnType<typeof inventoryOf>>, baseline: Awaited<ReturnType<typeof baselineOf>> | null): Finding[] => CHECKS.flatMap((c) => c.run({ inv, baseline }));

t.test('a PCI adapter resolves to its function: present', async (t) => {
  const inv = await inventoryCached(hgx());
  t.same(inv.nics.find((n) => n.name === 'mlx5_0')?.bdf, { state: 'present', value: P0.nic });
});

t.test('no PCI parent is absent: soft RoCE without a device link, siw on the loopback', async (t) => {
  const inv = await inventoryOf(hgx(), patches(softRoce('rxe0'), siwLoopback));
  t.same(inv.nics.find((n) => n.name === 'rxe0')?.bdf, { state: 'absent' }, 'rxe0: no device link');
  t.same(inv.nics.find((n) => n.name === 'siw_lo')?.bdf, { state: 'absent' }, 'siw_lo: its device is the netdev lo');
  t.same(inv.notes.filter((n) => /infiniband\/(rxe0|siw_lo)\/device/.test(n)), [], 'nothing unreadable about them');
});

t.test('a device link that cannot be resolved is unknown, with why', async (t) => {
  const inv = await inventoryOf(hgx(), deviceLoop('mlx5_0'));
  const bdf = inv.nics.find((n) => n.name === 'mlx5_0')?.bdf;
  t.equal(bdf?.state, 'unknown');
  t.match(bdf?.state === 'unknown' ? bdf.why : '', /^ELOOP: .*\/sys\/class\/infiniband\/mlx5_0\/device'$/);
});

t.test('an unreadable device link gives a skip, never a verdict: bare and against the baseline', async (t) => {
  const baseline = await baselineOf(hgx());
  const inv = await inventoryOf(hgx(), deviceLoop('mlx5_0'));
  const healthy = await inventoryCached(hgx());
  for (const [label, b] of [['bare', null], ['based', baseline]] as const) {
    const now = run(inv, b);
    const about = now.filter((f) => f.subject === 'mlx5_0' || f.subject === P0.nic || f.subject.includes(P0.nic));
    t.same(about.filter((f) => f.status !== 'skip').map((f) => `${f.check} ${f.code} ${f.subject}`), [], `${label}: nothing but skips about mlx5_0 or ${P0.nic}`);
    t.ok(about.some((f) => f.check === 'device-inventory' && f.code === 'inventory-unknown' && f.status === 'skip'), `${label}: device-inventory says it could not tell`);
    // Every verdict of the unreadable run is one the healthy node gets too.
    const was = new Set(run(healthy, b).map((f) => `${f.check} ${f.code} ${f.subject} ${f.status}`));
    t.same(now.filter((f) => f.status !== 'skip' && !was.has(`${f.check} ${f.code} ${f.subject} ${f.status}`)).map((f) => `${f.check} ${f.code} ${f.subject} ${f.status}`), [], `${label}: no new verdict`);
  }
});

t.test('baseline capture leaves the adapter out and says why', async (t) => {
  const inv = await inventoryOf(hgx(), deviceLoop('mlx5_0'));
  const { cls, warnings } = captureClass(inv, { name: 'x', match: ['gpu1'], platform: 'bare-metal', at: '2025-06-02T08:00:00Z' });
  t.equal(cls.devices.some((d) => d.bdf === P0.nic), false);
  t.same(warnings.filter((w) => w.startsWith('mlx5_0:')).map((w) => w.replace(/\(.*\)$/, '(…)')), ['mlx5_0: not in the class, its PCI function could not be read (…)']);
});

t.test('compare: an adapter whose link could not be read is a could-not-tell (minor), never moved or missing', async (t) => {
  const good = compareView(await inventoryCached(hgx()));
  const bad = compareView(await inventoryOf(hgx(), deviceLoop('mlx5_0')));
  t.equal(bad.nics.find((n) => n.name === 'mlx5_0')?.bdf, null);
  t.match(bad.nics.find((n) => n.name === 'mlx5_0')?.bdfUnknown ?? '', /^ELOOP: .*\/mlx5_0\/device'$/);
  t.same(presence(bad, good).map((d) => [d.impact, d.subject, d.b, d.response]), [['minor', 'mlx5_0', `mlx5_0 ConnectX-7 at ${P0.nic}`, response('unknown-side')]], 'suspect unreadable');
  t.same(presence(good, bad).map((d) => [d.impact, d.subject, d.a, d.response]), [['minor', 'mlx5_0', `mlx5_0 ConnectX-7 at ${P0.nic}`, response('unknown-side')]], 'reference unreadable');
  t.same(presence(good, good), [], 'alike');
});

t.test('the node summary carries the reason; one without it (healthy, or written before the field) still validates', async (t) => {
  const bad = buildSummary('gpu001', 'gpu001.tar.gz', new Uint8Array([1]), await inventoryOf(hgx(), deviceLoop('mlx5_0')), null);
  const good = buildSummary('gpu002', 'gpu002.tar.gz', new Uint8Array([2]), await inventoryCached(hgx()), null);
  t.same(validate('fleet-summary', JSON.parse(JSON.stringify(bad))), [], 'with nics[].bdfUnknown');
  t.same(validate('fleet-summary', JSON.parse(JSON.stringify(good))), [], 'without it');
  t.same(good.view.nics.filter((n) => 'bdfUnknown' in n), [], 'only an unreadable link adds the field');
});

t.test('without a baseline, a GPU whose nearest adapter may be the unplaced one is topology-unknown, never placed against another', async (t) => {
  const inv = await inventoryOf(hgx(), deviceLoop('mlx5_0'));
  const found = CHECKS.find((c) => c.id === 'topology-distance')!.run({ inv, baseline: null });
  const gpu0 = found.find((f) => f.subject === P0.gpu);
  t.same([gpu0?.code, gpu0?.status], ['topology-unknown', 'skip'], `GPU ${P0.gpu}: its PIX adapter mlx5_0 cannot be placed`);
  t.ok(found.some((f) => f.code === 'topology-ok' && f.status === 'pass' && f.actual === 'PIX'), 'a GPU with a placed PIX adapter is still judged');
});
