// Functions whose class could not be read (inventory `unaccounted`, inventory/pci.ts unaccountedOf): one that may be a
// Direct NIC complex's (right below a Grace root port, or below any bridge not read) leaves the complexes uncounted, so
// pcie-acs skips; one below bridges all read whose own port no complex hangs from changes no verdict. (On a root bus,
// or read and told by its IDs: pcie-acs.test.ts.)
import t from 'tap';
import type { Finding } from '../../src/model/finding.js';
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { node as TRAY } from '../gen/topologies/gb300-tray-numa.js';
import { remove } from './_patches.js';
import { hgx, inventoryOf, runCheck } from './_trees.js';

const noClass = (bdf: string) => remove(`sys/bus/pci/devices/${bdf}/class`);
/** What pcie-acs does not pass, and the two inventory lists. */
async function judged(n: GenNode, bdf: string): Promise<{ unidentified: readonly string[]; unaccounted: readonly string[]; acs: [string, string, string][] }> {
  const inv = await inventoryOf(n, noClass(bdf));
  const acs = runCheck('pcie-acs', inv, null).filter((f: Finding) => f.status !== 'pass').map((f): [string, string, string] => [f.status, f.code, f.message]);
  return { unidentified: inv.unidentified, unaccounted: inv.unaccounted, acs };
}
const untold = (bdf: string): [string, string, string] =>
  ['skip', 'acs-platform-unexpected', `which platform this is cannot be told: PCI function ${bdf} could not be told (its place, class or vendor unread), so the Direct NIC complexes cannot be counted: no mask can be told`];

t.test('GB300 tray: an NVMe drive on a Grace root port whose class cannot be read may be a GPU there: skip', async (t) => {
  const n = structuredClone(TRAY);
  // The tray's E1.S drive (acs-off-path.test.ts) on its own Grace root port, which the platform reads: a function
  // below a port a complex hangs from, unread (not Mellanox), so it may be that complex's GPU.
  n.hostBridges.find((hb) => hb.domainBus === '0010:00')!.devices.push({
    bdf: '0010:00:01.0', kind: 'rootport', vendor: 0x10de, device: 0x22b1, speed: 16, acsCtl: 0x1d,
    children: [{ bdf: '0010:02:00.0', kind: 'other', vendor: 0x144d, device: 0xa80a, classCode: 0x010802, driver: 'nvme', speed: 16, width: 4, iommuGroup: 501 }],
  });
  t.same(await judged(n, '0010:02:00.0'), { unidentified: ['0010:02:00.0'], unaccounted: ['0010:02:00.0'], acs: [untold('0010:02:00.0')] });
});

t.test('HGX H100: an NVMe drive below a third port of GPU 0\'s switch (not read), its class unreadable: skip', async (t) => {
  const n = hgx();
  // Root port and switch upstream port read (GPU 0's path), the drive's downstream port not: one bridge unread is
  // enough for the drive's place to be unknown.
  allDevices(n).find((d) => d.bdf === '0000:16:00.0')!.children!.push({
    bdf: '0000:17:02.0', kind: 'switch-down', speed: 32, acsCtl: 0,
    children: [{ bdf: '0000:1a:00.0', kind: 'other', vendor: 0x144d, device: 0xa80a, classCode: 0x010802, driver: 'nvme', speed: 16, width: 4 }],
  });
  t.same(await judged(n, '0000:1a:00.0'), { unidentified: ['0000:1a:00.0'], unaccounted: ['0000:1a:00.0'], acs: [untold('0000:1a:00.0')] });
});

t.test('GB300 tray: an NVMe drive behind a PCIe switch on a Grace root port (all read, none a complex\'s port): every mask judged', async (t) => {
  const n = structuredClone(TRAY);
  // A Broadcom PEX switch (vendor 0x1000) for storage: the platform reads the bridges below an NVIDIA root port; the
  // drive's own port is the switch's, which no complex hangs from.
  n.hostBridges.find((hb) => hb.domainBus === '0010:00')!.devices.push({
    bdf: '0010:00:01.0', kind: 'rootport', vendor: 0x10de, device: 0x22b1, speed: 16, acsCtl: 0x1d,
    children: [{ bdf: '0010:02:00.0', kind: 'switch-up', vendor: 0x1000, device: 0xc030, speed: 16, children: [{
      bdf: '0010:03:00.0', kind: 'switch-down', vendor: 0x1000, device: 0xc030, speed: 16, acsCtl: 0x1d,
      children: [{ bdf: '0010:04:00.0', kind: 'other', vendor: 0x144d, device: 0xa80a, classCode: 0x010802, driver: 'nvme', speed: 16, width: 4, iommuGroup: 501 }],
    }] }],
  });
  t.same(await judged(n, '0010:04:00.0'), { unidentified: ['0010:04:00.0'], unaccounted: [], acs: [] });
});
