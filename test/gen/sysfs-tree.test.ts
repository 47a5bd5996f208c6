// Checks the sysfs/procfs generator against the real H200 capture (same bytes where the kernel fixes them) and
// checks nesting, links, config space and RDMA class entries on a switched tree.
import t from 'tap';
import { promises as fsp, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FsHost } from '../../src/host/fs-host.js';
import { parsePciConfig } from '../../src/parsers/pci-config.js';
import { parseMemlock } from '../../src/parsers/limits.js';
import { parseKernelRelease, parseModules, parseNvidiaVersion } from '../../src/parsers/procfs.js';
import { buildTree, type GenNode } from './sysfs-tree.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const REAL = fileURLToPath(new URL('../../examples/h200-vm/', import.meta.url));
const GPU_DIR = 'sys/devices/pci0000:00/0000:00:06.0';
const real = (p: string): Buffer => readFileSync(path.join(REAL, p));

/** The captured Firecracker VM: one H200 on the root bus, numa_node -1, open driver 580.159.04. */
const h200: GenNode = {
  hostBridges: [{
    domainBus: '0000:00',
    numaNode: 0,
    devices: [{ bdf: '0000:00:06.0', kind: 'gpu', device: 0x2335, subsystem: [0x10de, 0x18bf], revision: 0xa1, speed: 32, width: 16, numaNode: -1,
      // Device Control as lspci shows the live H200 (raw-2026-12-01/lspci-vvv.txt): FatalErr+ only, NoSnoop-.
      errorEnables: 0x4, noSnoop: false, bar1GiB: 256,
      // On the VM's root bus there is no port above the GPU, so the kernel shows no link/ (raw-2026-12-01/sysfs.txt).
      linkAspm: null }],
  }],
  numa: [{ id: 0, cpus: '0-15' }],
  driver: { version: '580.159.04', open: true, builtBy: 'nixbld@', date: '', gcc: 'gcc version 15.3.0 (GCC)' },
  kernel: '6.18.44-fc-v657-gpu',
  memlockKiB: 'unlimited',
  cmdline: real('proc/cmdline').toString().trimEnd(),
};

t.test('H200 VM rebuilt: attribute bytes equal the capture', async (t) => {
  const dir = await scratchDirAsync('gdrgate-gentree-', TREE_TMP);
  await buildTree(dir, h200);
  const gen = (p: string): Buffer => readFileSync(path.join(dir, p));
  const same = [
    'vendor', 'device', 'class', 'subsystem_vendor', 'subsystem_device', 'revision', 'numa_node', 'local_cpulist', 'local_cpus',
    'enable', 'current_link_speed', 'current_link_width', 'max_link_speed', 'max_link_width', 'modalias', 'uevent',
  ];
  for (const a of same) t.equal(gen(`${GPU_DIR}/${a}`).toString(), real(`${GPU_DIR}/${a}`).toString(), a);
  for (const p of ['sys/devices/system/node/node0/cpulist', 'sys/devices/system/node/node0/distance', 'sys/devices/system/node/online',
    'sys/devices/system/node/possible', 'proc/driver/nvidia/version', 'proc/self/limits', 'proc/cmdline', 'sys/module/nvidia/version']) {
    t.equal(gen(p).toString(), real(p).toString(), p);
  }
  for (const l of [`${GPU_DIR}/driver`, `${GPU_DIR}/subsystem`, 'sys/bus/pci/devices/0000:00:06.0']) {
    t.equal(await fsp.readlink(path.join(dir, l)), await fsp.readlink(path.join(REAL, l)), `link ${l}`);
  }
  t.same(parseKernelRelease(gen('proc/version').toString()), parseKernelRelease(real('proc/version').toString()), 'release from /proc/version');
  t.ok(/^nvidia \d+ \S+ \S+ Live 0x[0-9a-f]{16}( \([A-Z]+\))?$/m.test(gen('proc/modules').toString()), '/proc/modules line shape');
});

t.test('H200 VM rebuilt: config space decodes like the captured blob', async (t) => {
  const dir = await scratchDirAsync('gdrgate-gentree-', TREE_TMP);
  await buildTree(dir, h200);
  const g = parsePciConfig(readFileSync(path.join(dir, GPU_DIR, 'config')));
  const r = parsePciConfig(real(`${GPU_DIR}/config`));
  t.equal(g.length, 4096);
  t.same(g.problems, []);
  for (const k of ['length', 'vendorId', 'deviceId', 'classCode', 'headerType', 'capsReadable', 'extReadable'] as const) t.equal(g[k], r[k], k);
  t.same(g.pcie, r.pcie, 'PCIe cap at 0x60: endpoint, LnkCap 32 GT/s x16, LnkSta 32 GT/s x16');
  t.same(g.capabilities.slice(0, 3), r.capabilities.slice(0, 3), 'PM → MSI → PCIe as captured');
  t.equal(g.acs.state, 'absent');
});

/** Root port → Broadcom switch → H100 + ConnectX-7 on two downstream ports, plus a numa-1 host bridge. */
const switched: GenNode = {
  hostBridges: [
    {
      domainBus: '0000:15', numaNode: 0, devices: [{
        bdf: '0000:15:01.0', kind: 'rootport', acsCtl: 0x001d, children: [{
          bdf: '0000:16:00.0', kind: 'switch-up', children: [
            { bdf: '0000:17:00.0', kind: 'switch-down', acsCtl: 0, children: [{ bdf: '0000:18:00.0', kind: 'gpu', speed: 32, iommuGroup: 31, ats: false }] },
            { bdf: '0000:17:01.0', kind: 'switch-down', acsCtl: 0x0005, speed: 16, maxSpeed: 32, width: 8, children: [{ bdf: '0000:19:00.0', kind: 'nic', speed: 16, maxSpeed: 32, width: 8, maxWidth: 16, ats: true, configBytes: 64, ib: { name: 'mlx5_0' } }] },
          ],
        }],
      }],
    },
    { domainBus: '0000:97', numaNode: 1, devices: [{ bdf: '0000:97:01.0', kind: 'rootport' }] },
  ],
  numa: [{ id: 0, cpus: '0-47,96-143' }, { id: 1, cpus: '48-95,144-191' }],
  driver: { version: '535.129.03', open: false },
  peermem: true,
  memlockKiB: 64,
  iommu: { units: ['dmar0', 'dmar1'], groupType: 'DMA-FQ' },
};

t.test('switched tree: nesting, relative links, realpath', async (t) => {
  const dir = await scratchDirAsync('gdrgate-gentree-', TREE_TMP);
  await buildTree(dir, switched);
  const gpu = 'sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0';
  const link = (p: string): Promise<string> => fsp.readlink(path.join(dir, p));
  t.equal(await link('sys/bus/pci/devices/0000:18:00.0'), `../../../${gpu.slice(4)}`);
  t.equal(await fsp.realpath(path.join(dir, 'sys/bus/pci/devices/0000:18:00.0')), await fsp.realpath(path.join(dir, gpu)));
  t.equal(await link(`${gpu}/driver`), '../../../../../../bus/pci/drivers/nvidia');
  t.equal(await link(`${gpu}/iommu_group`), '../../../../../../kernel/iommu_groups/31');
  t.equal(readFileSync(path.join(dir, 'sys/kernel/iommu_groups/31/type'), 'utf8'), 'DMA-FQ\n');
  t.equal(await link('sys/class/iommu/dmar1'), '../../devices/virtual/iommu/dmar1');
  const host = new FsHost(dir);
  t.same(await host.realPath('/sys/bus/pci/devices/0000:19:00.0'), { ok: true, value: '/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0' });
  t.same(await host.realPath('/sys/class/infiniband/mlx5_0/device'), { ok: true, value: '/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0' });
  t.equal(await link('sys/class/infiniband/mlx5_0'), '../../devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0/infiniband/mlx5_0');
  t.equal(await link('sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0/infiniband/mlx5_0/device'), '../../../0000:19:00.0');
  const rd = async (p: string): Promise<string> => { const r = await host.readText(p); return r.ok ? r.value : `<${r.reason}>`; };
  t.equal(await rd('/sys/class/infiniband/mlx5_0/ports/1/state'), '4: ACTIVE\n');
  t.equal(await rd('/sys/class/infiniband/mlx5_0/ports/1/rate'), '400 Gb/sec (4X NDR)\n');
  t.equal(await rd('/sys/class/infiniband/mlx5_0/hca_type'), 'MT4129\n');
  t.equal(await rd('/sys/bus/pci/devices/0000:19:00.0/current_link_speed'), '16.0 GT/s PCIe\n');
  t.equal(await rd('/sys/bus/pci/devices/0000:19:00.0/max_link_width'), '16\n');
  t.equal(await rd('/sys/bus/pci/devices/0000:19:00.0/numa_node'), '0\n');
  t.equal(await rd('/sys/bus/pci/devices/0000:19:00.0/local_cpus'), '00000000,0000ffff,ffffffff,00000000,0000ffff,ffffffff\n');
  t.equal(await rd('/sys/bus/pci/devices/0000:97:01.0/local_cpulist'), '48-95,144-191\n');
  t.equal(await rd('/sys/bus/pci/devices/0000:15:01.0/secondary_bus_number'), '22\n');
  t.equal(await rd('/sys/bus/pci/devices/0000:15:01.0/subordinate_bus_number'), '25\n');
  t.equal(await rd('/sys/devices/system/node/online'), '0-1\n');
});

t.test('switched tree: config space per PCI/PCIe spec', async (t) => {
  const dir = await scratchDirAsync('gdrgate-gentree-', TREE_TMP);
  await buildTree(dir, switched);
  const cfg = (bdf: string) => parsePciConfig(readFileSync(path.join(dir, 'sys/bus/pci/devices', bdf, 'config')));
  const rp = cfg('0000:15:01.0');
  t.match(rp, { headerType: 1, classCode: 0x060400, vendorId: 0x8086, pcie: { state: /^present$/, value: { portType: 4 } }, acs: { state: /^present$/, value: { ctl: { srcValid: true, reqRedir: true, cmpltRedir: true, upstreamFwd: true, transBlk: false } } } });
  const raw = readFileSync(path.join(dir, 'sys/bus/pci/devices/0000:15:01.0/config'));
  t.same([raw[0x18], raw[0x19], raw[0x1a]], [0x15, 0x16, 0x19], 'primary/secondary/subordinate bus');
  t.match(cfg('0000:16:00.0'), { headerType: 1, pcie: { state: /^present$/, value: { portType: 5 } }, acs: { state: /^absent$/ } });
  t.match(cfg('0000:17:00.0'), { pcie: { state: /^present$/, value: { portType: 6 } }, acs: { state: /^present$/, value: { ctl: { reqRedir: false, cmpltRedir: false } } } });
  t.match(cfg('0000:17:01.0'), { pcie: { state: /^present$/, value: { portType: 6, linkCap: { speed: 32, width: 8 }, linkStatus: { speed: 16, width: 8 } } }, acs: { state: /^present$/, value: { ctl: { srcValid: true, reqRedir: true, cmpltRedir: false } } } });
  t.match(cfg('0000:18:00.0'), { headerType: 0, classCode: 0x030200, pcie: { state: /^present$/, value: { portType: 0, linkStatus: { speed: 32, width: 16 } } }, ats: { state: /^present$/, value: { enabled: false } } });
  const nic = cfg('0000:19:00.0');
  t.match(nic, { length: 64, vendorId: 0x15b3, deviceId: 0x1021, classCode: 0x020700, capsReadable: false, pcie: { state: /^unknown$/ }, ats: { state: /^unknown$/ } });
  t.equal(readFileSync(path.join(dir, 'sys/bus/pci/devices/0000:19:00.0/config')).length, 64, 'unprivileged read: 64 bytes');
});

t.test('switched tree: ASPM as drivers/pci/pcie/aspm.c shows it (link/ below a downstream port), the policy as the live H200\'s kernel writes it', async (t) => {
  const dir = await scratchDirAsync('gdrgate-gentree-', TREE_TMP);
  await buildTree(dir, switched);
  const ls = (bdf: string): string[] | null => { const p = path.join(dir, 'sys/bus/pci/devices', bdf, 'link'); try { return readdirSync(p); } catch { return null; } };
  t.same(['0000:15:01.0', '0000:16:00.0', '0000:17:00.0', '0000:18:00.0', '0000:19:00.0'].map(ls), [null, ['l1_aspm'], null, ['l1_aspm'], null], 'l1_aspm on the GPU and the switch upstream port; none on ports above a link, none on the ConnectX (no ASPM support)');
  t.equal(readFileSync(path.join(dir, 'sys/bus/pci/devices/0000:18:00.0/link/l1_aspm'), 'utf8'), '0\n');
  t.equal(readFileSync(path.join(dir, 'sys/module/pcie_aspm/parameters/policy'), 'utf8'), readFileSync(path.join(REAL, '../../test/fixtures/device-h200-live/raw-2026-12-01/sysfs.txt'), 'utf8').split('=== aspm policy\n')[1]!.split('\n')[0] + '\n');
  const gpu = parsePciConfig(readFileSync(path.join(dir, 'sys/bus/pci/devices/0000:18:00.0/config')));
  t.match(gpu.pcie, { state: /^present$/, value: { mpsSupported: 256, lnkCtl: { aspm: 0 }, devCtl: { mps: 256, mrrs: 4096 } } }, 'H100: DevCap MaxPayload 256, LnkCtl ASPM Disabled');
});

t.test('procfs: proprietary driver, peermem, memlock row', async (t) => {
  const dir = await scratchDirAsync('gdrgate-gentree-', TREE_TMP);
  await buildTree(dir, switched);
  const rd = (p: string): string => readFileSync(path.join(dir, p), 'utf8');
  t.match(rd('proc/driver/nvidia/version'), /^NVRM version: NVIDIA UNIX x86_64 Kernel Module {2}535\.129\.03 {2}Thu Oct 19 18:56:32 UTC 2023\nGCC version: {2}gcc version/);
  t.same(parseNvidiaVersion(rd('proc/driver/nvidia/version')), { ok: true, value: { flavour: 'proprietary', version: '535.129.03' } });
  t.ok(parseModules(rd('proc/modules')).has('nvidia_peermem'));
  t.ok(parseModules(rd('proc/modules')).has('mlx5_ib'));
  t.match(rd('proc/modules'), /^nvidia \d+ 3 nvidia_peermem,nvidia_uvm,nvidia_modeset, Live 0x[0-9a-f]{16} \(POE\)$/m);
  t.equal(rd('sys/module/nvidia_peermem/version'), '535.129.03\n');
  t.match(rd('proc/self/limits'), /^Max locked memory {9}65536 {16}65536 {16}bytes {5}$/m);
  t.same(parseMemlock(rd('proc/self/limits')), { ok: true, value: { soft: 65536, hard: 65536 } });
  t.equal(rd('proc/self/limits').split('\n').length, real('proc/self/limits').toString().split('\n').length, 'same rows as the capture');
});

t.test('bad descriptions fail loudly', async (t) => {
  const one = (devices: GenNode['hostBridges'][0]['devices']): GenNode => ({ hostBridges: [{ domainBus: '0000:00', numaNode: 0, devices }], numa: [{ id: 0, cpus: '0-3' }] });
  await t.rejects(buildTree(t.testdir(), one([{ bdf: '0000:01:00.0', kind: 'gpu' }])), /cannot sit on bus 00/);
  await t.rejects(buildTree(t.testdir(), one([{ bdf: '0000:00:01.0', kind: 'gpu', children: [{ bdf: '0000:01:00.0', kind: 'nic' }] }])), /not a bridge/);
  await t.rejects(buildTree(t.testdir(), one([{ bdf: '0000:00:01.0', kind: 'gpu', speed: 7 }])), /no PCIe speed encoding/);
  await t.rejects(buildTree(t.testdir(), one([{ bdf: '00:01.0', kind: 'gpu' }])), /not a BDF/);
});
