// compare follows an RDMA adapter by its address, not its name, in every dimension that names one (GPU↔NIC cells,
// firmware, IOMMU mode): two adapters that swapped names (probe order, a udev rule) are a rename and nothing else; an
// adapter that kept its name in another slot is a path change.
import t from 'tap';
import { compareInventories } from '../../src/compare/compare.js';
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { base, tree } from './trees.js';

const nicNamed = (n: GenNode, name: string) => allDevices(n).find((d) => d.ib?.name === name)!;

t.test('mlx5_0 and mlx5_1 swapped names: two minor renames, no topology difference', async (t) => {
  const dir = t.testdir({});
  const a = base();
  const [x, y] = [nicNamed(a, 'mlx5_0'), nicNamed(a, 'mlx5_1')];
  [x.ib!.name, y.ib!.name] = ['mlx5_1', 'mlx5_0'];
  const d = compareInventories((await tree(dir, 'a', a)).inv, (await tree(dir, 'b', base())).inv);
  t.same(d.map((z) => [z.impact, z.area, z.subject, z.a, z.b]), [
    ['minor', 'device', '0000:16:00.0', 'mlx5_1', 'mlx5_0'],
    ['minor', 'device', '0000:36:00.0', 'mlx5_0', 'mlx5_1'],
  ]);
});

t.test('mlx5_0 moved to the other pair\'s switch (another address, the same name): its paths are compared by name, and changed', async (t) => {
  const dir = t.testdir({});
  const a = base();
  const nic = nicNamed(a, 'mlx5_0');
  allDevices(a).find((d) => d.bdf === '0000:12:01.0')!.children = [];
  allDevices(a).find((d) => d.bdf === '0000:31:00.0')!.children!.push({ bdf: '0000:32:02.0', kind: 'switch-down', speed: 32, acsCtl: 0, children: [{ ...nic, bdf: '0000:34:00.0' }] });
  const d = compareInventories((await tree(dir, 'a', a)).inv, (await tree(dir, 'b', base())).inv);
  t.same(d.filter((z) => z.area === 'topology').map((z) => [z.impact, z.subject, z.a, z.b]), [['critical', '0000:13:00.0-mlx5_0', 'NODE', 'PIX'], ['major', '0000:33:00.0-mlx5_0', 'PIX', 'NODE']]);
});

// The other dimensions that name an adapter (its firmware, its IOMMU mode) follow it by address too: with names
// swapped, each adapter is compared with itself, and a real change is still said, under the name `b` gives it.
t.test('names swapped, the two adapters on different firmware: only the renames', async (t) => {
  const dir = t.testdir({});
  const [a, b] = [base(), base()];
  for (const n of [a, b]) nicNamed(n, 'mlx5_1').ib!.fwVer = '28.40.1000';
  const [x, y] = [nicNamed(a, 'mlx5_0'), nicNamed(a, 'mlx5_1')];
  [x.ib!.name, y.ib!.name] = ['mlx5_1', 'mlx5_0'];
  const d = compareInventories((await tree(dir, 'a', a)).inv, (await tree(dir, 'b', b)).inv);
  t.same(d.map((z) => [z.area, z.subject, z.a, z.b]), [
    ['device', '0000:16:00.0', 'mlx5_1', 'mlx5_0'],
    ['device', '0000:36:00.0', 'mlx5_0', 'mlx5_1'],
  ]);
  nicNamed(b, 'mlx5_0').ib!.fwVer = '28.41.1000';
  const e = compareInventories((await tree(dir, 'a2', a)).inv, (await tree(dir, 'b2', b)).inv);
  t.same(e.filter((z) => z.area === 'firmware').map((z) => [z.impact, z.subject, z.a, z.b]), [['major', 'mlx5_0', '28.39.1002', '28.41.1000']], 'the adapter at 16:00.0 updated: said once, by its name on b');
});

t.test('names swapped, one adapter outside any IOMMU group: only the renames', async (t) => {
  const dir = t.testdir({});
  const [a, b] = [base(), base()];
  for (const n of [a, b]) {
    n.iommu = { units: ['dmar0', 'dmar1'], groupType: 'DMA' };
    delete nicNamed(n, 'mlx5_1').iommuGroup;
  }
  const [x, y] = [nicNamed(a, 'mlx5_0'), nicNamed(a, 'mlx5_1')];
  [x.ib!.name, y.ib!.name] = ['mlx5_1', 'mlx5_0'];
  const d = compareInventories((await tree(dir, 'a', a)).inv, (await tree(dir, 'b', b)).inv);
  t.same(d.filter((z) => z.area !== 'device').map((z) => [z.area, z.subject, z.a, z.b]), [], 'no IOMMU difference: each adapter kept its mode');
});
