// What pcie-payload adds to the inventory's reads on the 8-GPU/8-NIC HGX tree (test/gen): one list of `link/` per
// path device below a downstream port, one read per ASPM attribute the kernel shows there, the policy file; /proc/cmdline is read once for
// it and iommu-mode together. Nothing of it is read for a device off the GPU↔NIC paths.
import t from 'tap';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { ASPM_POLICY } from '../../src/inventory/payload.js';
import { allDevices, buildTree } from '../gen/sysfs-tree.js';
import { CountingHost } from '../helpers/counting-host.js';
import { node as HGX } from '../gen/topologies/sglang30401-hgx-h100.js';
import { scratchDir } from '../helpers/scratch.js';

const TMP = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
const root = scratchDir('gdrgate-payload-reads-', TMP);
t.teardown(() => rmSync(root, { recursive: true, force: true }));
await buildTree(root, HGX);

t.test('reads added by pcie-payload on the 8-GPU HGX tree', async (t) => {
  const host = new CountingHost(new FsHost(root));
  const inv = await buildInventory(host);
  const added = host.calls.filter((c) => /\/link(\/|$)/.test(c) || c.endsWith(ASPM_POLICY));
  const lists = added.filter((c) => c.startsWith('list '));
  const files = added.filter((c) => c.startsWith('read ') && c.includes('/link/'));
  // What the tree holds, counted on disk: the attributes under the path devices' link/ directories.
  const onDisk = [...inv.pci.values()].reduce((n, d) => n + (existsSync(path.join(root, d.sysPath, 'link')) ? readdirSync(path.join(root, d.sysPath, 'link')).length : 0), 0);
  t.equal(inv.pci.size, 48, '8 GPUs, 8 NICs, 32 bridges and switch ports on their paths');
  // aspm.c shows a link/ only on a device below a downstream port: GPUs and NICs below switch ports, switch upstream
  // ports below root ports; never on a root port or on a switch's downstream ports (below its upstream port).
  const kind = new Map(allDevices(HGX).map((d) => [d.bdf, d.kind]));
  const below = [...inv.pci.values()].filter((d) => ['rootport', 'switch-down'].includes(kind.get(d.bridges.at(-1) ?? '') ?? ''));
  t.equal(below.length, 24, '8 GPUs, 8 NICs, 8 switch upstream ports');
  t.same(lists.map((c) => c.slice(5, -5)).sort(), below.map((d) => d.sysPath).sort(), 'one link/ list per path device below a downstream port, none elsewhere');
  t.equal(files.length, onDisk, `every attribute shown is read once (${onDisk} on disk), none guessed`);
  t.equal(added.filter((c) => c.endsWith(ASPM_POLICY)).length, 1, 'the policy file once');
  t.equal(host.calls.filter((c) => c === 'read /proc/cmdline').length, 1, '/proc/cmdline once, shared with iommu-mode');
  t.equal(added.length, below.length + onDisk + 1);
  t.comment(`pcie-payload adds ${added.length} Host reads of ${host.calls.length} (${lists.length} lists, ${files.length} attribute files, 1 policy file; config space and /proc/cmdline already read)`);
});
