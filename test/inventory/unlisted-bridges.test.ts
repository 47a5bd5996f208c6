// A bridge on a GPU's or NIC's path that /sys/bus/pci/devices does not list (removed since the listing, a capture
// without its link) is read from the device's own path: for every bridge of the HGX tree, the inventory's devices are
// the same with its listing link gone, so no check sees "no port above" where there is one.
import t from 'tap';
import { rmSync, symlinkSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { Inventory } from '../../src/model/inventory.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { scratchDirAsync } from '../helpers/scratch.js';
import { hgx } from '../checks/_trees.js';

const devices = (inv: Inventory): unknown => JSON.parse(JSON.stringify([...inv.pci.entries()]));

t.test('each bridge on a path, its listing link removed: the same devices, the same facts', async (t) => {
  const dir = await scratchDirAsync('gdrgate-unlisted-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await buildTree(dir, hgx());
  const whole = await buildInventory(new FsHost(dir));
  const bridges = [...whole.pci.values()].filter((d) => whole.gpus.every((g) => g.bdf !== d.bdf) && whole.nics.every((n) => n.bdf.state !== 'present' || n.bdf.value !== d.bdf)).map((d) => d.bdf);
  t.equal(bridges.length, 32, 'root ports, switch upstream and downstream ports of the 8 pairs');
  for (const b of bridges) {
    const link = path.join(dir, 'sys/bus/pci/devices', b);
    const target = readlinkSync(link);
    rmSync(link);
    const inv = await buildInventory(new FsHost(dir));
    symlinkSync(target, link);
    t.same(devices(inv), devices(whole), `${b} not listed`);
  }
});
