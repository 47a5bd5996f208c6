// One pair of generated trees per dimension: compare reports exactly the expected lines (consequences included).
import t from 'tap';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { compareInventories } from '../../src/compare/compare.js';
import { CATALOG } from '../../src/checks/catalog.js';
import type { GenNode } from '../gen/sysfs-tree.js';
import { base, dev, pair, parentOf, tree } from './trees.js';

type Line = [impact: string, area: string, subject: string, a: string, b: string];

const CASES: Record<string, { mutate: (n: GenNode) => void; want: Line[] }> = {
  'device missing: a GPU gone from the bus': {
    mutate: (n) => void (parentOf(n, '0000:33:00.0').children = []),
    want: [['critical', 'device', '0000:33:00.0', 'missing', 'GPU H100 SXM5']],
  },
  'device extra: a GPU on the suspect the reference lacks (a third port of pair 0\'s switch)': {
    mutate: (n) => void dev(n, '0000:11:00.0').children!.push({ bdf: '0000:12:02.0', kind: 'switch-down', speed: 32, acsCtl: 0, children: [
      { bdf: '0000:14:00.0', kind: 'gpu', device: 0x2330, subsystem: [0x10de, 0x16c1], speed: 32, iommuGroup: 30 },
    ] }),
    want: [['major', 'device', '0000:14:00.0', 'GPU H100 SXM5', 'absent']],
  },
  'device moved: an adapter at a new BDF under its old name': {
    mutate: (n) => void (dev(n, '0000:36:00.0').bdf = '0000:36:00.1'),
    want: [['critical', 'device', 'mlx5_1', 'mlx5_1 ConnectX-7 at 0000:36:00.1', 'mlx5_1 ConnectX-7 at 0000:36:00.0']],
  },
  'root complex: pair 1 re-hung under pair 0’s host bridge (same BDFs)': {
    mutate: (n) => {
      const rp = n.hostBridges[1]!.devices[0]!;
      rp.bdf = '0000:10:02.0';
      n.hostBridges[0]!.devices.push(rp);
      n.hostBridges.pop();
    },
    want: [
      ['critical', 'root-complex', '0000:33:00.0', 'pci0000:10', 'pci0000:30'],
      ['critical', 'root-complex', '0000:36:00.0', 'pci0000:10', 'pci0000:30'],
      ['major', 'topology', '0000:13:00.0-mlx5_1', 'PHB', 'NODE'],
      ['major', 'topology', '0000:33:00.0-mlx5_0', 'PHB', 'NODE'],
    ],
  },
  'NUMA node: pair 1 on socket 1': {
    mutate: (n) => void (n.hostBridges[1] = pair(1, 1)),
    want: [
      ['critical', 'topology', '0000:13:00.0-mlx5_1', 'SYS', 'NODE'],
      ['critical', 'topology', '0000:33:00.0-mlx5_0', 'SYS', 'NODE'],
      ['major', 'numa', '0000:33:00.0', 'node 1', 'node 0'],
      ['major', 'numa', '0000:36:00.0', 'node 1', 'node 0'],
    ],
  },
  'GPU↔NIC class: the NIC behind a second switch (PIX → PXB)': {
    mutate: (n) => {
      const dsp = dev(n, '0000:12:01.0');
      const nic = dsp.children![0]!;
      dsp.children = [{ bdf: '0000:14:00.0', kind: 'switch-up', speed: 32, children: [{ bdf: '0000:15:00.0', kind: 'switch-down', speed: 32, acsCtl: 0, children: [nic] }] }];
    },
    want: [['critical', 'topology', '0000:13:00.0-mlx5_0', 'PXB', 'PIX']],
  },
  'link width of a device: GPU at x8': {
    mutate: (n) => Object.assign(dev(n, '0000:13:00.0'), { width: 8, maxWidth: 16 }),
    want: [['critical', 'link-width', '0000:13:00.0', 'Gen5 x8', 'Gen5 x16']],
  },
  'link width of a bridge: switch uplink at x8': {
    mutate: (n) => Object.assign(dev(n, '0000:11:00.0'), { width: 8, maxWidth: 16 }),
    want: [['critical', 'link-width', '0000:11:00.0', 'Gen5 x8', 'Gen5 x16']],
  },
  'link speed of a device: NIC at Gen4': {
    mutate: (n) => Object.assign(dev(n, '0000:16:00.0'), { speed: 16, maxSpeed: 32 }),
    want: [['major', 'link-speed', '0000:16:00.0', 'Gen4 x16', 'Gen5 x16']],
  },
  'link speed of a bridge: root port at Gen4': {
    mutate: (n) => Object.assign(dev(n, '0000:10:01.0'), { speed: 16, maxSpeed: 32 }),
    want: [['major', 'link-speed', '0000:10:01.0', 'Gen4 x16', 'Gen5 x16']],
  },
  'link speed of a GPU: minor (a GPU at idle lowers its speed)': {
    mutate: (n) => Object.assign(dev(n, '0000:33:00.0'), { speed: 2.5, maxSpeed: 32 }),
    want: [['minor', 'link-speed', '0000:33:00.0', 'Gen1 x16', 'Gen5 x16']],
  },
  'ACS control of a bridge: ReqRedir on the NIC’s switch port': {
    mutate: (n) => void (dev(n, '0000:12:01.0').acsCtl = 0x0005),
    want: [['critical', 'acs', '0000:12:01.0', 'ACSCtl SrcValid+ ReqRedir+', 'ACSCtl all off']],
  },
  'GPUDirect window of a GPU: 32 GiB where the reference has 128 GiB': {
    mutate: (n) => void (dev(n, '0000:33:00.0').bar1GiB = 32),
    want: [['critical', 'bar1', '0000:33:00.0', '32 GiB', '128 GiB']],
  },
  'Relaxed Ordering off on an adapter': {
    mutate: (n) => void (dev(n, '0000:16:00.0').relaxedOrdering = false),
    want: [['major', 'relaxed-ordering', '0000:16:00.0', 'RlxdOrd-', 'RlxdOrd+']],
  },
  'AER: a fatal Malformed TLP on a GPU (counter and UESta), reporting off on an adapter, counters gone on the other GPU': {
    mutate: (n) => {
      Object.assign(dev(n, '0000:33:00.0'), { aerCounters: { fatal: { 18: 1 } }, aer: { ueSta: 1 << 18 } });
      dev(n, '0000:16:00.0').errorEnables = 0x4;
      dev(n, '0000:13:00.0').aerCounters = null;
    },
    want: [
      ['critical', 'aer', '0000:33:00.0', 'uncorrectable: aer_dev_fatal 1 (MalfTLP 1); UESta MalfTLP (severity fatal)', 'no uncorrectable error'],
      ['major', 'aer', '0000:16:00.0', 'DevCtl CorrErr- NonFatalErr- FatalErr+ UnsupReq-', 'DevCtl CorrErr+ NonFatalErr+ FatalErr+ UnsupReq+'],
      ['minor', 'aer', '0000:13:00.0', 'no AER counters (aer_dev_* absent)', 'aer_dev_* counters'],
    ],
  },
  'payload: a GPU at MaxPayload 512 bytes above its switch port\'s 256 (the spec forbids it)': {
    mutate: (n) => void (dev(n, '0000:13:00.0').mps = 512),
    want: [['critical', 'payload', '0000:13:00.0', 'MaxPayload 512 bytes above its port\'s 256, MaxReadReq 4096 bytes', 'MaxPayload 256 bytes, MaxReadReq 4096 bytes']],
  },
  'payload: an adapter reading at most 512 bytes': {
    mutate: (n) => void (dev(n, '0000:16:00.0').mrrs = 512),
    want: [['major', 'payload', '0000:16:00.0', 'MaxPayload 256 bytes, MaxReadReq 512 bytes', 'MaxPayload 256 bytes, MaxReadReq 4096 bytes']],
  },
  'payload: ASPM L1 enabled on a GPU': {
    mutate: (n) => void (dev(n, '0000:13:00.0').aspm = 2),
    want: [['minor', 'payload', '0000:13:00.0', 'ASPM L1 Enabled; link l1_aspm=1', 'ASPM Disabled; link l1_aspm=0']],
  },
  'payload: the kernel booted with pci=pcie_bus_perf': {
    mutate: (n) => void (n.cmdline = `${n.cmdline} pci=pcie_bus_perf`),
    want: [['major', 'payload', 'node', 'pci=pcie_bus_perf, ASPM policy default', 'no pci=pcie_bus_*, ASPM policy default']],
  },
  'IOMMU mode: translated (DMA-FQ) groups': {
    mutate: (n) => void (n.iommu = { units: ['dmar0', 'dmar1'], groupType: 'DMA-FQ' }),
    want: ['0000:13:00.0', '0000:33:00.0', 'mlx5_0', 'mlx5_1'].map((s): Line => ['critical', 'iommu', s, 'translated (DMA-FQ)', 'passthrough (identity)']),
  },
  // The node has IOMMU units (dmar0, dmar1), the GPU no iommu_group link: not "off", which only a node without units is.
  'IOMMU: a GPU in no group on a node with IOMMU units': {
    mutate: (n) => void delete dev(n, '0000:13:00.0').iommuGroup,
    want: [['major', 'iommu', '0000:13:00.0', 'no group', 'passthrough (identity)']],
  },
  'IOMMU kernel parameters': {
    mutate: (n) => void (n.cmdline = n.cmdline!.replace(' iommu=pt', '')),
    want: [['major', 'iommu', 'cmdline', 'intel_iommu=on', 'intel_iommu=on iommu=pt']],
  },
  // The kernel matches a parameter's name with `-` and `_` as one (kernel/params.c parameq, init/main.c parameqn).
  'IOMMU kernel parameters spelled with dashes (intel-iommu=on): the same parameters, no difference': {
    mutate: (n) => void (n.cmdline = n.cmdline!.replace('intel_iommu=on', 'intel-iommu=on')),
    want: [],
  },
  'GPUDirect mechanism: nvidia_peermem not loaded (proprietary driver, so no DMA-BUF)': {
    mutate: (n) => void (n.peermem = false),
    want: [['critical', 'gpudirect', 'mechanism', 'none', 'peermem']],
  },
  'modules: mlx5_ib not loaded': {
    mutate: (n) => void (n.modules = ['nvidia_uvm', 'nvidia_modeset', 'nvidia', 'ib_uverbs', 'ib_core', 'mlx5_core']),
    want: [['major', 'module', 'mlx5_ib', 'absent', 'loaded']],
  },
  'memlock: 64 MiB instead of unlimited': {
    mutate: (n) => void (n.memlockKiB = 65536),
    want: [['critical', 'memlock', 'self', '64 MiB', 'unlimited']],
  },
  'ATS: disabled on an adapter': {
    mutate: (n) => void (dev(n, '0000:16:00.0').ats = false),
    want: [['major', 'ats', '0000:16:00.0', 'disabled', 'enabled']],
  },
  'driver version': {
    mutate: (n) => void (n.driver = { version: '535.161.08', open: false }),
    want: [['major', 'driver', 'nvidia', 'proprietary 535.161.08', 'proprietary 535.183.01']],
  },
  'firmware of one adapter': {
    mutate: (n) => void (dev(n, '0000:16:00.0').ib!.fwVer = '28.38.1002'),
    want: [['major', 'firmware', 'mlx5_0', '28.38.1002', '28.39.1002']],
  },
  'kernel release': {
    mutate: (n) => void (n.kernel = '5.15.0-140-generic'),
    want: [['minor', 'kernel', 'node', '5.15.0-140-generic', '5.15.0-119-generic']],
  },
};

t.test('each dimension, alone', async (t) => {
  const dir = t.testdir();
  const ref = await tree(dir, 'ref', base());
  t.same(compareInventories((await tree(dir, 'same', base())).inv, ref.inv), [], 'identical trees: no difference');
  let i = 0;
  for (const [name, c] of Object.entries(CASES)) {
    const n = base();
    c.mutate(n);
    const sus = await tree(dir, `sus${i++}`, n);
    const got = compareInventories(sus.inv, ref.inv);
    t.same(got.map((d): Line => [d.impact, d.area, d.subject, d.a, d.b]), c.want, name);
  }
});

t.test('responses are the catalog’s wording, worst first', async (t) => {
  const dir = t.testdir();
  const ref = await tree(dir, 'ref', base());
  const n = base();
  Object.assign(dev(n, '0000:13:00.0'), { width: 8, maxWidth: 16 });
  dev(n, '0000:12:01.0').acsCtl = 0x0005;
  n.kernel = '5.15.0-140-generic';
  const got = compareInventories((await tree(dir, 'sus', n)).inv, ref.inv);
  t.same(got.map((d) => d.impact), ['critical', 'critical', 'minor']);
  t.same(got.map((d) => d.area), ['link-width', 'acs', 'kernel'], 'a narrow link before ACS: both critical, width is first along the path');
  t.equal(got[0]!.response, CATALOG['link-width-low'].do);
  t.equal(got[1]!.response, CATALOG['acs-redirect'].do);
});

t.test('a GPU faster on the suspect than on the reference (which idled at Gen1) is ahead, never "confirm under load"', async (t) => {
  const dir = t.testdir();
  const r = base();
  Object.assign(dev(r, '0000:33:00.0'), { speed: 2.5, maxSpeed: 32 });
  const got = compareInventories((await tree(dir, 'sus', base())).inv, (await tree(dir, 'ref', r)).inv);
  t.same(got.map((d) => [d.impact, d.area, d.subject, d.a, d.b]), [['minor', 'link-speed', '0000:33:00.0', 'Gen5 x16', 'Gen1 x16']]);
  t.equal(got[0]!.response, 'The suspect is ahead of the reference here: confirm the change is intended and recapture the reference if so.');
});

/** Pairs whose reference is not the base node: each side changed, compared suspect against reference. */
const PAIRS: Record<string, { sus: (n: GenNode) => void; ref: (n: GenNode) => void; refPatch?: (root: string) => void; want: Line[] }> = {
  'memlock: the hard limit alone lower (8 MiB/8 MiB against 8 MiB, hard unlimited) is low': {
    sus: (n) => void (n.memlockKiB = 8192),
    ref: (n) => Object.assign(n, { memlockKiB: 8192, memlockHardKiB: 'unlimited' }),
    want: [['critical', 'memlock', 'self', '8 MiB', '8 MiB (hard unlimited)']],
  },
  'memlock: the same soft limit with a higher hard one (8 MiB, hard unlimited, against 8 MiB/8 MiB) is not low': {
    sus: (n) => Object.assign(n, { memlockKiB: 8192, memlockHardKiB: 'unlimited' }),
    ref: (n) => void (n.memlockKiB = 8192),
    want: [['minor', 'memlock', 'self', '8 MiB (hard unlimited)', '8 MiB']],
  },
  'IOMMU: strict translation (DMA) against lazy (DMA-FQ): a change of mode, not a loss of passthrough': {
    sus: (n) => void (n.iommu = { units: ['dmar0', 'dmar1'], groupType: 'DMA' }),
    ref: (n) => void (n.iommu = { units: ['dmar0', 'dmar1'], groupType: 'DMA-FQ' }),
    want: ['0000:13:00.0', '0000:33:00.0', 'mlx5_0', 'mlx5_1'].map((s): Line => ['major', 'iommu', s, 'translated (DMA)', 'translated (DMA-FQ)']),
  },
  'IOMMU: the reference could not read GPU 0000:13:00.0\'s group type: one side could not tell, never a change': {
    sus: () => undefined,
    ref: () => undefined,
    refPatch: (root) => rmSync(path.join(root, 'sys/kernel/iommu_groups/10/type')),
    want: [['minor', 'iommu', '0000:13:00.0', 'passthrough (identity)', 'unknown']],
  },
};

t.test('each dimension against a reference of its own', async (t) => {
  const dir = t.testdir();
  let i = 0;
  for (const [name, c] of Object.entries(PAIRS)) {
    const [rn, sn] = [base(), base()];
    c.ref(rn);
    c.sus(sn);
    const ref = await tree(dir, `ref${i}`, rn);
    c.refPatch?.(ref.root);
    const sus = await tree(dir, `sus${i++}`, sn);
    const got = compareInventories(sus.inv, await buildInventory(new FsHost(ref.root)));
    t.same(got.map((d): Line => [d.impact, d.area, d.subject, d.a, d.b]), c.want, name);
  }
});
