// HGX A100 8-GPU server (A100-SXM4-80GB, Intel Ice Lake, five ConnectX-6 Dx RoCE bonds): the PCI tree behind the NCCL
// topology dump aliyun/SimAI keeps as SimCCL/test/topo_8A100_4CX6.xml
// (test/fixtures/nccl_topo_xml/simai_hgx_8xa100_80g_5cx6dx_bond_roce.xml, SOURCES.md there).
// From the dump: every bus id NCCL wrote, their classes, vendor/device/subsystem ids, the switch nesting (three switch
// levels above each GPU: Broadcom PEX 0x1000:0xc010, the last with NVIDIA's subsystem 0x10de:0x13b8), which NUMA node
// each branch hangs from, the CPU masks (128 CPUs: 0-31,64-95 | 32-63,96-127), the CPU (GenuineIntel 6/106), the
// adapters' names (mlx5_bond_0..4) and 200G rate, and the link text of a kernel before pci_speed_string ("16 GT/s").
// Modelled, because NCCL's walk does not write them (it rewinds two sysfs levels at a time, so a switch's downstream
// port and the root port above an element never get one): the root ports, one host bridge per branch, and the
// downstream ports with their device numbers. All links Gen4 x16, as the dump's min(device, port) values say.
// Made up (the dump does not say): the root ports' and host bridges' buses, the kernel release and driver version.
import type { GenDevice, GenHostBridge, GenNode } from '../sysfs-tree.js';

export const source = 'simai_hgx_8xa100_80g_5cx6dx_bond_roce.xml';

const b = (bus: number, dev = 0): string => `0000:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.0`;
const PEX = { vendor: 0x1000, device: 0xc010 } as const;
let bondNo = 0;

const gpu = (bus: number): GenDevice => ({ bdf: b(bus), kind: 'gpu', device: 0x20b2, subsystem: [0x10de, 0x1463], speed: 16 });
const nic = (bus: number): GenDevice => ({
  bdf: b(bus), kind: 'nic', device: 0x101d, classCode: 0x020000, subsystem: [0x15b3, 0x0064], speed: 16,
  ib: { name: `mlx5_bond_${bondNo++}`, ports: [{ state: '4: ACTIVE', physState: '5: LinkUp', rate: '200 Gb/sec (4X HDR)', linkLayer: 'Ethernet' }] },
});
/** A downstream port at `bus:dev.0` whose secondary bus holds `child`. */
const down = (bus: number, dev: number, child: GenDevice): GenDevice => ({ bdf: b(bus, dev), kind: 'switch-down', ...PEX, subsystem: [0x1000, 0xa096], speed: 16, children: [child] });
/** A switch: its upstream port at `bus`, one downstream port per child on bus + 1 (device numbers in order). */
const sw = (bus: number, sub: [number, number], children: GenDevice[]): GenDevice =>
  ({ bdf: b(bus), kind: 'switch-up', ...PEX, subsystem: sub, speed: 16, children: children.map((c, i) => down(bus + 1, i, c)) });
const BRD: [number, number] = [0x10de, 0x13b8];
const OEM: [number, number] = [0x1000, 0xa096];

/** GPU g behind the board's switch at g-2, behind a second-level switch at `mid`. */
const gpuBranch = (mid: number, g: number, extra: GenDevice[] = []): GenDevice => sw(mid, OEM, [sw(g - 2, BRD, [gpu(g)]), ...extra]);
const branch = (rp: number, numaNode: number, top: GenDevice): GenHostBridge =>
  ({ domainBus: `0000:${rp.toString(16).padStart(2, '0')}`, numaNode, devices: [{ bdf: b(rp, 1), kind: 'rootport', speed: 16, children: [top] }] });

function build(): GenHostBridge[] {
  bondNo = 0;
  const solo = branch(0x05, 0, nic(0x06)); // mlx5_bond_0 straight on a root port
  const hbs = [
    branch(0x0b, 0, sw(0x0c, OEM, [gpuBranch(0x0e, 0x13), gpuBranch(0x15, 0x19, [nic(0x1a)])])),
    branch(0x40, 0, sw(0x41, OEM, [gpuBranch(0x43, 0x48), gpuBranch(0x49, 0x4d, [nic(0x4f)])])),
    branch(0x81, 1, sw(0x82, OEM, [gpuBranch(0x84, 0x89), gpuBranch(0x8a, 0x8e, [nic(0x90)])])),
    branch(0xa5, 1, sw(0xa6, OEM, [gpuBranch(0xa8, 0xad), gpuBranch(0xaf, 0xb3, [nic(0xb4)])])),
  ];
  return [solo, ...hbs];
}

export const node: GenNode = {
  hostBridges: build(),
  numa: [{ id: 0, cpus: '0-31,64-95' }, { id: 1, cpus: '32-63,96-127' }],
  cpuModalias: 'cpu:type:x86,ven0000fam0006mod006A:feature:,0000,0001,0002,0003',
  legacyLinkSpeedText: true,
  driver: { version: '470.82.01', open: false },
  kernel: '4.19.91-24.1.al7.x86_64',
  hostname: 'hgx-a100',
};
