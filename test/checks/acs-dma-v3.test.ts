// A ConnectX-8 Data Direct function belongs to the adapter whose functions carry its VPD V3 (the adapter's UUID), as
// NVIDIA's rdma_topo pairs them: a DMA function without V3, or whose V3 no ConnectX NIC function carries (the PF's
// VPD gone, the PF gone from the bus), is a complex it refuses, so no mask can be told (skip, never a pass by the
// ports). acs-fuzz-oracle.test.ts found it (seeds 35, 53, 96, 118: every port passed where rdma_topo refused).
import t from 'tap';
import { allDevices, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as DMA } from '../gen/topologies/gb300-cx8-dma-direct.js';
import { inventoryOf, runCheck } from './_trees.js';

const dev = (n: GenNode, bdf: string): GenDevice => allDevices(n).find((d) => d.bdf === bdf)!;
/** pcie-acs's findings other than passes, as [status, code, message]. */
const notPass = async (n: GenNode): Promise<[string, string, string][]> =>
  runCheck('pcie-acs', await inventoryOf(n), null).filter((f) => f.status !== 'pass').map((f) => [f.status, f.code, f.message]);
const skip = (why: string): [string, string, string][] => [['skip', 'acs-platform-unexpected', `ConnectX-8 Data Direct platform, but ${why}: no mask can be told`]];

t.test('GB300 Data Direct as built: every DMA function pairs with its adapter, every port judged', async (t) => {
  const inv = await inventoryOf(structuredClone(DMA));
  t.equal(inv.adapterV3.get('0009:03:00.0')?.state, 'present', 'the DMA function\'s V3 read');
  t.same(await notPass(structuredClone(DMA)), [], 'no skip, no fail');
});

t.test('a DMA function without VPD V3 cannot be paired: skip', async (t) => {
  const n = structuredClone(DMA);
  delete dev(n, '0009:03:00.0').vpd!.v3;
  t.same(await notPass(n), skip('DMA function 0009:03:00.0 has no VPD V3 (its adapter\'s UUID), so its adapter cannot be told'), 'before: every port passed');
  const m = structuredClone(DMA);
  delete dev(m, '0008:03:00.0').vpd;
  t.same(await notPass(m), skip('DMA function 0008:03:00.0 has no VPD V3 (its adapter\'s UUID), so its adapter cannot be told'), 'no vpd file at all: the same');
});

t.test('a DMA function whose V3 no ConnectX NIC carries (PF VPD gone, V3 of no adapter, PF gone): skip', async (t) => {
  const n = structuredClone(DMA);
  delete dev(n, '0012:03:00.0').vpd;
  t.same(await notPass(n), skip('no ConnectX NIC function carries DMA function 0018:03:00.0\'s VPD V3 5d1c0a7e-3b52-4e1f-9a4c-000000000003'), 'the PF\'s VPD gone');
  const m = structuredClone(DMA);
  dev(m, '0019:03:00.0').vpd!.v3 = 'deadbeef-0000-4000-8000-000000000000';
  t.same(await notPass(m), skip('no ConnectX NIC function carries DMA function 0019:03:00.0\'s VPD V3 deadbeef-0000-4000-8000-000000000000'), 'a V3 of no adapter');
  const o = structuredClone(DMA);
  const rp = allDevices(o).find((d) => d.bdf === '0010:00:00.0')!;
  rp.children = [];
  t.same(await notPass(o), skip('no ConnectX NIC function carries DMA function 0019:03:00.0\'s VPD V3 5d1c0a7e-3b52-4e1f-9a4c-000000000002'), 'the adapter\'s switch and PF gone from the bus');
});

t.test('an x86 node reads no VPD', async (t) => {
  const { hgx } = await import('./_trees.js');
  t.equal((await inventoryOf(hgx())).adapterV3.size, 0);
});
