// What gdrgate reads for NCCL's topology file at its edges: CPU vendors beyond Intel and AMD, an ARM node's
// /proc/cpuinfo, an adapter NCCL's IB transport skips (no port ACTIVE), and a kernel speed text in no known style.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { ncclEndpoints, parseCpuIdentity, readNcclTopo } from '../../src/topo/nccl-read.js';
import { renderNcclXml } from '../../src/topo/nccl-xml.js';
import { buildTree, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { CountingHost } from '../helpers/counting-host.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

t.test('x86 vendors by Linux number (X86_VENDOR_*), family as NCCL counts it', async (t) => {
  // Zhaoxin (10) prints "  Shanghai  ", Centaur (5) "CentaurHauls": NCCL's two Zhaoxin strings, both needing a model.
  t.same(parseCpuIdentity('cpu:type:x86,ven000Afam0007mod005B:feature:,0000', null), { arch: 'x86_64', vendor: '  Shanghai  ', familyid: 7, modelid: 91 });
  t.same(parseCpuIdentity('cpu:type:x86,ven0005fam0007mod001B:feature:,0000', null), { arch: 'x86_64', vendor: 'CentaurHauls', familyid: 7, modelid: 27 });
  // Hygon family 18h: base 0xF plus extended 0x9, NCCL's 0xF + (0x9 << 4).
  t.same(parseCpuIdentity('cpu:type:x86,ven0009fam0018mod0000:feature:,0000', null), { arch: 'x86_64', vendor: 'HygonGenuine', familyid: 159, modelid: 0 });
});

t.test("an ARM node without a cpu modalias: arm64 from /proc/cpuinfo's CPU implementer", async (t) => {
  const grace = 'processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\nCPU revision\t: 0\n\nprocessor\t: 1\n';
  t.same(parseCpuIdentity(null, grace), { arch: 'arm64', vendor: null, familyid: null, modelid: null });
  t.same(parseCpuIdentity(null, 'processor\t: 0\n'), { arch: null, vendor: null, familyid: null, modelid: null }, 'neither: unknown');
});

const MODALIAS = 'cpu:type:x86,ven0000fam0006mod008F:feature:,0000,0001';
const edited = (pick: (d: GenDevice) => boolean, change: (d: GenDevice) => GenDevice): GenNode => {
  const walk = (d: GenDevice): GenDevice => {
    const c = pick(d) ? change(d) : d;
    return c.children ? { ...c, children: c.children.map(walk) } : c;
  };
  return { ...TWO, cpuModalias: MODALIAS, hostBridges: TWO.hostBridges.map((hb) => ({ ...hb, devices: hb.devices.map(walk) })) };
};
const treeOf = async (n: GenNode, after?: (dir: string) => void): Promise<FsHost> => {
  const dir = await scratchDirAsync('gdrgate-ncclread-', TREE_TMP);
  await buildTree(dir, n);
  after?.(dir);
  return new FsHost(dir);
};
const pciLines = (xml: string): string[] => xml.split('\n').filter((l) => /<(pci|net) /.test(l)).map((l) => l.trim());

t.test('an adapter with no ACTIVE port is not in the file: NCCL\'s IB transport skips it', async (t) => {
  const down = edited((d) => d.ib?.name === 'mlx5_1', (d) => ({ ...d, ib: { ...d.ib!, ports: [{ state: '1: DOWN', physState: '3: Disabled', rate: '400 Gb/sec (4X NDR)', linkLayer: 'InfiniBand' }] } }));
  const host = await treeOf(down);
  const inv = await buildInventory(host, { slurmdPidFiles: [] });
  t.same(ncclEndpoints(inv).map((e) => e.net?.name ?? e.sysPath.slice(-12)), ['0000:18:00.0', '0000:9a:00.0', 'mlx5_0']);
  t.same(pciLines(renderNcclXml(await readNcclTopo(host, inv))).filter((l) => l.includes('0000:9b:00.0') || l.startsWith('<net')), ['<net name="mlx5_0"/>']);
});

t.test('a max_link_speed in no style the kernel prints: every speed read from its file, as NCCL reads it', async (t) => {
  // The first GPU is a 64 GT/s one on a kernel whose table stops at 32 GT/s: its file says "Unknown" (pci_speed_string
  // for an encoding it does not know). The inventory's 64 GT/s from Link Capabilities says nothing of the style, so no
  // text is made up; NCCL's sscanf finds no number in "Unknown" (FLT_MAX), so the GPU's link is its port's.
  const gen6 = edited((d) => d.bdf === '0000:18:00.0', (d) => ({ ...d, maxSpeed: 64 }));
  const host = await treeOf(gen6, (dir) => writeFileSync(path.join(dir, 'sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0/max_link_speed'), 'Unknown\n'));
  const lines = pciLines(renderNcclXml(await readNcclTopo(host, await buildInventory(host, { slurmdPidFiles: [] }))));
  t.same(lines.filter((l) => l.includes('0000:18:00.0') || l.includes('0000:16:00.0')), [
    '<pci busid="0000:16:00.0" class="0x060400" vendor="0x1000" device="0xc030" subsystem_vendor="0x1000" subsystem_device="0x0000" link_speed="32.0 GT/s PCIe" link_width="16">',
    '<pci busid="0000:18:00.0" class="0x030200" vendor="0x10de" device="0x2330" subsystem_vendor="0x10de" subsystem_device="0x16c1" link_speed="32.0 GT/s PCIe" link_width="16"/>',
  ], "the GPU's link: its port's 32.0 GT/s PCIe");
});

t.test('an adapter whose merged element is no device here: none in the file, NCCL places it', async (t) => {
  // A function passed through on a root bus with nothing at device 0 (as a VM's VF sits): NCCL's IB transport, merging
  // VFs, files it under 0000:15:00.0, which is no device here, so the file leaves it out.
  const vm: GenNode = { ...TWO, cpuModalias: MODALIAS, hostBridges: TWO.hostBridges.map((hb, i) => (i === 0 ? { ...hb, devices: [...hb.devices, { bdf: '0000:15:02.0', kind: 'nic', device: 0x101e, subsystem: [0x15b3, 0x0041], speed: 32, ib: { name: 'mlx5_2' } }] } : hb)) };
  const host = await treeOf(vm);
  const inv = await buildInventory(host, { slurmdPidFiles: [] });
  t.same(inv.nics.map((n) => n.name), ['mlx5_0', 'mlx5_1', 'mlx5_2'], 'an RDMA adapter of the node');
  t.same(ncclEndpoints(inv).map((e) => (e.own ?? e.sysPath).slice(-12)), ['0000:18:00.0', '0000:9a:00.0', '0000:19:00.0', '0000:9b:00.0']);
  const xml = renderNcclXml(await readNcclTopo(host, inv));
  t.same([...xml.matchAll(/busid="([^"]+)"/g)].map((m) => m[1]), ['0000:16:00.0', '0000:18:00.0', '0000:19:00.0', '0000:98:00.0', '0000:9a:00.0', '0000:9b:00.0'], 'no element for 0000:15:00.0, which is no device');
});

t.test('the files read for the topology beyond what the inventory holds: one speed sample, the CPU, each cpumap', async (t) => {
  // A GPU passed through on the root bus (as in a VM): its port's side is the host bridge's directory, which has no
  // file to read. Every other text is the inventory's, printed as the kernel prints it.
  const vm: GenNode = { ...TWO, cpuModalias: MODALIAS, hostBridges: TWO.hostBridges.map((hb, i) => (i === 0 ? { ...hb, devices: [...hb.devices, { bdf: '0000:15:03.0', kind: 'gpu', device: 0x2335, speed: 32 }] } : hb)) };
  const fs = await treeOf(vm);
  const inv = await buildInventory(fs, { slurmdPidFiles: [] });
  const host = new CountingHost(fs);
  await readNcclTopo(host, inv);
  t.same(host.calls, [
    'read /sys/devices/pci0000:15/0000:15:03.0/max_link_speed',
    'read /sys/devices/system/cpu/modalias',
    'read /sys/devices/system/node/node0/cpumap',
    'read /sys/devices/system/node/node1/cpumap',
  ]);
});
