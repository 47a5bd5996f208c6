// The Epilog's bands follow an adapter's name, so an adapter whose name and address no longer pair as in the class's
// capture (renamedNics) has its paths left unjudged: a two-pair HGX-style node (test/compare/trees.ts) captured, then
// its adapters renamed, swapped or moved, read back from a generated /sys.
import t, { type Test } from 'tap';
import { captureClass } from '../../src/baseline/capture.js';
import { renamedNics } from '../../src/epilog/renamed.js';
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { base, tree } from '../compare/trees.js';

const nicNamed = (n: GenNode, name: string) => allDevices(n).find((d) => d.ib?.name === name)!;

async function renamedAfter(t: Test, change: (n: GenNode) => void): Promise<[string, string][]> {
  const dir = t.testdir({});
  const ref = captureClass((await tree(dir, 'ref', base())).inv, { name: 'ref', match: ['*'], platform: 'bare-metal', at: '2026-12-05T06:00:00Z' }).cls;
  const now = base();
  change(now);
  return [...renamedNics(ref.devices, (await tree(dir, 'now', now)).inv.nics)].sort();
}

t.test('the same names at the same addresses: every path judged', async (t) => {
  t.same(await renamedAfter(t, () => {}), []);
});

t.test('mlx5_0 and mlx5_1 swapped: neither name is judged against its band', async (t) => {
  t.same(await renamedAfter(t, (n) => {
    const [x, y] = [nicNamed(n, 'mlx5_0'), nicNamed(n, 'mlx5_1')];
    [x.ib!.name, y.ib!.name] = ['mlx5_1', 'mlx5_0'];
  }), [
    ['mlx5_0', 'the adapter at 0000:16:00.0 is mlx5_1 here, mlx5_0 in the baseline'],
    ['mlx5_1', 'the adapter at 0000:16:00.0 is mlx5_1 here, mlx5_0 in the baseline'],
  ]);
});

t.test('mlx5_0 renamed by a naming rule (ibp22s0): both names left unjudged, the other adapter judged', async (t) => {
  t.same(await renamedAfter(t, (n) => void (nicNamed(n, 'mlx5_0').ib!.name = 'ibp22s0')), [
    ['ibp22s0', 'the adapter at 0000:16:00.0 is ibp22s0 here, mlx5_0 in the baseline'],
    ['mlx5_0', 'the adapter at 0000:16:00.0 is ibp22s0 here, mlx5_0 in the baseline'],
  ]);
});

t.test('an adapter gone: nothing renamed (presence says it is missing)', async (t) => {
  t.same(await renamedAfter(t, (n) => {
    const up = allDevices(n).find((d) => d.children?.some((c) => c.ib?.name === 'mlx5_1'))!;
    up.children = up.children!.filter((c) => c.ib?.name !== 'mlx5_1');
  }), []);
});

t.test('an adapter whose address cannot be read: not judged; one function with two RDMA devices: no rename', async (t) => {
  const { unknown, present } = await import('../../src/model/fact.js');
  const recorded = [{ bdf: '0000:16:00.0', role: 'nic' as const, name: 'mlx5_0' }, { bdf: '0000:36:00.0', role: 'nic' as const, name: 'mlx5_1' }];
  const nic = (name: string, bdf: ReturnType<typeof present<string>> | ReturnType<typeof unknown>) => ({ name, bdf } as Parameters<typeof renamedNics>[1][number]);
  t.same([...renamedNics(recorded, [nic('mlx5_0', unknown('EACCES')), nic('mlx5_1', present('0000:36:00.0'))])], [['mlx5_0', 'its PCI address could not be read (EACCES)']]);
  t.same([...renamedNics(recorded, [nic('mlx5_0', present('0000:16:00.0')), nic('siw_ens1', present('0000:16:00.0')), nic('mlx5_1', present('0000:36:00.0'))])], [], 'siw beside mlx5_0 on its function');
});
