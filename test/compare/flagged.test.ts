// Node to node, the faults compare has no dimension for are differences too: what the universal rules flag on the
// suspect and not on the reference, in an area no dimension already tells of. Before, a ConnectX-8 DMA function in an
// IOMMU group of its own (GB300: iommu-mode fails) and a GPU whose config space reads all ones (device-inventory fails)
// were "equivalent" to the good node, or a minor "could not tell".
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { compareInventories } from '../../src/compare/compare.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { allDevices, buildTree, type GenNode } from '../gen/sysfs-tree.js';
import { node as GB300 } from '../gen/topologies/gb300-cx8-dma-direct.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';
import { base, tree } from './trees.js';

type Line = [impact: string, area: string, subject: string, a: string, b: string];
const lines = (ds: ReturnType<typeof compareInventories>): Line[] => ds.map((d) => [d.impact, d.area, d.subject, d.a, d.b]);

t.test('a GB300 ConnectX-8 DMA function in an IOMMU group of its own: a critical iommu difference', async (t) => {
  const dir = await scratchDirAsync('gdrgate-flagged-', TREE_TMP);
  const split = structuredClone(GB300) as GenNode;
  const dma = allDevices(split).find((d) => d.driver === 'mlx5_data_direct')!;
  dma.iommuGroup = 99;
  await buildTree(path.join(dir, 'good'), GB300);
  await buildTree(path.join(dir, 'split'), split);
  const inv = async (n: string) => buildInventory(new FsHost(path.join(dir, n)));
  const got = lines(compareInventories(await inv('split'), await inv('good')));
  t.same(got.map(([impact, area, subject]) => [impact, area, subject]), [['critical', 'iommu', dma.bdf]], 'before: no difference, "equivalent"');
  t.equal(got[0]![4], 'not flagged on the reference (iommu-mode iommu-group-split)');
  t.same(lines(compareInventories(await inv('good'), await inv('good'))), [], 'the good node against itself: nothing');
});

t.test('a GPU whose config space reads all ones (fallen off the bus): a critical device difference', async (t) => {
  const dir = t.testdir({});
  const good = await tree(dir, 'good', base());
  const sus = await tree(dir, 'sus', base());
  const gpu = sus.inv.pci.get('0000:13:00.0')!;
  const config = path.join(sus.root, gpu.sysPath, 'config');
  writeFileSync(config, Buffer.alloc(readFileSync(config).length, 0xff));
  const got = lines(compareInventories(await buildInventory(new FsHost(sus.root)), good.inv)).filter(([impact]) => impact !== 'minor');
  t.same(got.map(([impact, area, subject, , b]) => [impact, area, subject, b]), [['critical', 'device', '0000:13:00.0', 'not flagged on the reference (device-inventory inventory-not-responding)']], 'before: minor differences only');
});
