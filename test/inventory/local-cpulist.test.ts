// A device's local_cpulist (drivers/pci/pci-sysfs.c local_cpulist_show): the kernel writes at least one CPU (all of
// them for a device without affinity), so an empty file is no placement: unknown, never "no CPUs near this GPU". On
// the generated two-socket tree, through the real filesystem.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const dir = await scratchDirAsync('gdrgate-cpulist-', TREE_TMP);
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
await buildTree(dir, TWO);

t.test('an empty local_cpulist is unknown; a written one is the CPUs it names', async (t) => {
  const before = await buildInventory(new FsHost(dir));
  const gpu = before.gpus[0]!.bdf;
  const d = before.pci.get(gpu)!;
  t.equal(d.localCpus.state, 'present', 'as generated');
  writeFileSync(path.join(dir, d.sysPath, 'local_cpulist'), '\n');
  const after = (await buildInventory(new FsHost(dir))).pci.get(gpu)!;
  t.same([after.localCpuList, after.localCpus], [{ state: 'present', value: '' }, { state: 'unknown', why: `${d.sysPath}/local_cpulist: empty` }]);
  writeFileSync(path.join(dir, d.sysPath, 'local_cpulist'), '0-3,8\n');
  t.same((await buildInventory(new FsHost(dir))).pci.get(gpu)!.localCpus, { state: 'present', value: [[0, 3], [8, 8]] });
});
