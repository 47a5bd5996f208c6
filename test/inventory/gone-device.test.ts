// A function listed in /sys/bus/pci/devices whose link no longer resolves (removed between the listing and the look:
// a hot unplug, a VF disabled) is gone, not a function that cannot be told: the inventory leaves it out, and it is
// neither unidentified nor unaccounted. On the generated two-socket tree, through the real filesystem.
import { rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const dir = await scratchDirAsync('gdrgate-gone-', TREE_TMP);
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
await buildTree(dir, TWO);

t.test('a dangling device link: left out, not unidentified', async (t) => {
  const before = await buildInventory(new FsHost(dir));
  t.same([before.unidentified, before.unaccounted], [[], []], 'the tree as generated');
  // What the kernel leaves for an instant after pci_stop_and_remove_bus_device: the bus entry, its device gone.
  symlinkSync('../../../devices/pci0000:00/0000:00:1f.6', path.join(dir, 'sys/bus/pci/devices/0000:00:1f.6'));
  const after = await buildInventory(new FsHost(dir));
  t.same([after.pci.has('0000:00:1f.6'), after.unidentified, after.unaccounted, after.pci.size], [false, [], [], before.pci.size]);
});
