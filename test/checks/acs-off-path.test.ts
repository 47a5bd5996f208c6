// A Direct NIC platform's rules cover ports off every GPU↔NIC path, as rdma_topo reads the whole tree: a Grace root
// port carrying only an NVMe drive (GB300 tray's E1.S) must hold the kernel's isolation; a ConnectX-8 DMA function
// whose GPU is gone (Xid 79) leaves a complex rdma_topo refuses, so the platform cannot be told (skip, never a pass by
// the other ports); a NUMA (Grace root port) node that cannot be judged says so as such; every PF of an inline
// ConnectX-8 is held to its GPU's IOMMU group, not the first alone. Without the oracle: these
// are what acs-fuzz-oracle.test.ts checks against rdma_topo on thousands of variants.
import t from 'tap';
import type { GenDevice, GenNode } from '../gen/sysfs-tree.js';
import { node as DMA } from '../gen/topologies/gb300-cx8-dma-direct.js';
import { node as TRAY } from '../gen/topologies/gb300-tray-numa.js';
import { inventoryOf, runCheck } from './_trees.js';

const nvmeRoot = (acsCtl: number): GenDevice => ({
  bdf: '0010:00:01.0', kind: 'rootport', vendor: 0x10de, device: 0x22b1, speed: 16, acsCtl,
  children: [{ bdf: '0010:02:00.0', kind: 'other', vendor: 0x144d, device: 0xa80a, classCode: 0x010802, driver: 'nvme', speed: 16, width: 4, iommuGroup: 501 }],
});
const withNvme = (acsCtl: number): GenNode => {
  const n = structuredClone(TRAY);
  n.hostBridges.find((hb) => hb.domainBus === '0010:00')!.devices.push(nvmeRoot(acsCtl));
  return n;
};
const acs = async (n: GenNode): Promise<[string, string, string][]> =>
  runCheck('pcie-acs', await inventoryOf(n), null).filter((f) => f.subject === '0010:00:01.0' || f.subject === 'node').map((f) => [f.status, f.code, f.subject]);

t.test('GB300 tray: a Grace root port with only an NVMe drive below is judged, isolation or not', async (t) => {
  t.same(await acs(withNvme(0x1d)), [['pass', 'acs-mask-ok', '0010:00:01.0']], 'the kernel\'s isolation (xx111x1): pass');
  t.same(await acs(withNvme(0)), [['fail', 'acs-mask', '0010:00:01.0']], 'before: never read, the node passed (rdma_topo: FAIL)');
});

t.test('GB300 Data Direct: a DMA function whose GPU is gone leaves a complex that cannot be judged: skip', async (t) => {
  const n = structuredClone(DMA);
  // The GPU of the 0018 complex gone from the bus; its DMA function, switches and root port stay.
  const drop = (ds: GenDevice[]): void => {
    for (let i = ds.length - 1; i >= 0; i--) (ds[i]!.kind === 'gpu' && ds[i]!.bdf.startsWith('0018:') ? ds.splice(i, 1) : drop(ds[i]!.children ?? []));
  };
  for (const hb of n.hostBridges) drop(hb.devices);
  const fs = runCheck('pcie-acs', await inventoryOf(n), null);
  t.same(fs.filter((f) => f.status !== 'pass').map((f) => [f.status, f.code]), [['skip', 'acs-platform-unexpected']], 'before: every port passed (the DMA segment off every path was never read)');
  t.equal(fs.find((f) => f.status === 'skip')!.message, 'ConnectX-8 Data Direct platform, but 0 GPUs below Grace root port 0018:00:00.0, want 1 beside DMA function 0018:03:00.0: no mask can be told');
});

t.test('a NUMA (Grace root port) node that cannot be judged is said to be one, never "inline"', async (t) => {
  const n = structuredClone(TRAY);
  // NUMA node 0's GPUs moved to node 1 in firmware's table: node 0 keeps NICs and no GPU.
  for (const hb of n.hostBridges) for (const d of hb.devices[0]!.children ?? []) if (d.kind === 'gpu') d.numaNode = 1;
  const fs = runCheck('pcie-acs', await inventoryOf(n), null).filter((f) => f.status !== 'pass');
  t.same(fs.map((f) => [f.status, f.code, f.message]), [['skip', 'acs-platform-unexpected', 'Grace/Vera root ports platform, but no GPU on NUMA node 0: no mask can be told']], 'before: "ConnectX switch inline platform, but …"');
});

t.test('HGX B300 inline, bare metal: a second PF of a ConnectX-8 in an IOMMU group apart from its GPU fails, as the first would', async (t) => {
  const { hgxB300 } = await import('../gen/topologies/hgx-b300-cx8-inline.js');
  const { allDevices } = await import('../gen/sysfs-tree.js');
  /** The NIC 0000:39:00.0 with a second PF .1 (a dual-port card) in `group`, or in its own (null: the same). */
  const pf1 = (group: number | null): GenNode => {
    const n = hgxB300();
    const pf0 = allDevices(n).find((d) => d.kind === 'nic' && d.bdf === '0000:39:00.0')!;
    pf0.multiFunction = true;
    const parent = allDevices(n).find((d) => d.children?.includes(pf0))!;
    parent.children!.push({ ...structuredClone(pf0), bdf: '0000:39:00.1', iommuGroup: group ?? pf0.iommuGroup!, ib: { name: 'mlx5_1_1', fwVer: pf0.ib!.fwVer } });
    return n;
  };
  // The inline verdicts (NIC with its GPU), not the passthrough ones of the same subjects.
  const inline = async (n: GenNode): Promise<[string, string, string, string][]> =>
    runCheck('iommu-mode', await inventoryOf(n), null).filter((f) => f.subject.startsWith('0000:39:00') && f.message.endsWith('(inline ConnectX, bare metal)')).map((f) => [f.status, f.code, f.subject, f.message]);
  t.same(await inline(pf1(null)), [
    ['pass', 'iommu-ok', '0000:39:00.0', 'NIC 0000:39:00.0 in IOMMU group 41, GPU 0000:3c:00.0 in 41 (inline ConnectX, bare metal)'],
    ['pass', 'iommu-ok', '0000:39:00.1', 'NIC 0000:39:00.1 in IOMMU group 41, GPU 0000:3c:00.0 in 41 (inline ConnectX, bare metal)'],
  ], 'both PFs in the GPU\'s group: pass');
  t.same(await inline(pf1(777)), [
    ['pass', 'iommu-ok', '0000:39:00.0', 'NIC 0000:39:00.0 in IOMMU group 41, GPU 0000:3c:00.0 in 41 (inline ConnectX, bare metal)'],
    ['fail', 'iommu-group-shared', '0000:39:00.1', 'NIC 0000:39:00.1 in IOMMU group 777, GPU 0000:3c:00.0 in 41 (inline ConnectX, bare metal)'],
  ], 'before: the second PF never judged');
});
