// Adapter names follow probe order (and udev rules), addresses do not: on the HGX tree with any two adapters' names
// swapped, every check judged against the reference's baseline says what it says of the node as built.
import t from 'tap';
import { CHECKS } from '../../src/checks/index.js';
import type { Finding } from '../../src/model/finding.js';
import { baselineOf, dev, hgx, HGX, inventoryOf, NICS } from './_trees.js';

const said = (fs: readonly Finding[]): string[] => fs.filter((f) => f.status !== 'pass').map((f) => `${f.status} ${f.check} ${f.code} ${f.subject}`).sort();

t.test('mlx5_0 swapped with each other adapter: no check says more or less than of the node as built', async (t) => {
  const baseline = await baselineOf(HGX);
  const run = async (n: ReturnType<typeof hgx>): Promise<string[]> => {
    const inv = await inventoryOf(n);
    return said(CHECKS.flatMap((c) => c.run({ inv, baseline })));
  };
  const asBuilt = await run(hgx());
  for (const other of NICS.slice(1)) {
    const n = hgx();
    const [a, b] = [dev(n, NICS[0]!), dev(n, other)];
    [a.ib!.name, b.ib!.name] = [b.ib!.name, a.ib!.name];
    t.same(await run(n), asBuilt, `mlx5_0 and ${b.ib!.name === 'mlx5_0' ? a.ib!.name : b.ib!.name} swapped`);
  }
});
