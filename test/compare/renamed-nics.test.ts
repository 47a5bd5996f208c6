// compare matches a GPU↔NIC cell by the adapter's address, not its name: two adapters that swapped names (probe
// order, a udev rule) are a rename and nothing else; an adapter that kept its name in another slot is a path change.
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
