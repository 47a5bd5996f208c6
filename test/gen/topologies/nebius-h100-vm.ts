// Nebius AI 8x H100 virtual machine (GPU cluster, InfiniBand): the PCI tree behind the NCCL topology file Nebius
// publishes as nebius/nccl-topology nccl-topo-h100-v1.xml (test/fixtures/nccl_topo_xml/nebius_h100_vm_8xh100_8cx7_ib_trimmed.xml,
// SOURCES.md there): an NCCL dump of the VM with the gpu elements, guids and host_hash taken out by hand.
// From the file: bus ids, classes, vendor/device/subsystem ids (TI XIO3130 upstream ports 0x104c:0x8232 with a zero
// subsystem, ConnectX-7 VFs 0x15b3:0x101e, H100 0x10de:0x2330), which NUMA node each pair hangs from, the CPU masks
// (160 CPUs: 0-79 | 80-159), the CPU (GenuineIntel 6/106), the adapters' names and 400G rate, every link 32.0 GT/s x16.
// Modelled, because NCCL's walk never writes them: the two downstream ports of each emulated switch (bus u+1, devices
// 0 and 1, TI's downstream id 0x8233) and one root port per switch on a host bridge per NUMA node (made-up buses 0x89
// and 0xa7, root ports 00.0-03.0, whose secondary buses are the dump's upstream ports); the driver version.
import type { GenDevice, GenHostBridge, GenNode } from '../sysfs-tree.js';

export const source = 'nebius_h100_vm_8xh100_8cx7_ib_trimmed.xml';

const b = (bus: number, dev = 0): string => `0000:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.0`;

/** Upstream port u: NIC mlx5_<n> at u+2, GPU at u+3, each behind its own downstream port on bus u+1. */
function pair(u: number, n: number, port: number): GenDevice {
  const nic: GenDevice = {
    bdf: b(u + 2), kind: 'nic', device: 0x101e, subsystem: [0x15b3, 0x0023], speed: 32,
    ib: { name: `mlx5_${n}`, ports: [{ state: '4: ACTIVE', physState: '5: LinkUp', rate: '400 Gb/sec (4X NDR)', linkLayer: 'InfiniBand' }] },
  };
  const gpu: GenDevice = { bdf: b(u + 3), kind: 'gpu', device: 0x2330, subsystem: [0x10de, 0x16c1], speed: 32 };
  const down = (dev: number, child: GenDevice): GenDevice => ({ bdf: b(u + 1, dev), kind: 'switch-down', vendor: 0x104c, device: 0x8233, subsystem: [0, 0], speed: 32, children: [child] });
  const up: GenDevice = { bdf: b(u), kind: 'switch-up', vendor: 0x104c, device: 0x8232, subsystem: [0, 0], speed: 32, children: [down(0, nic), down(1, gpu)] };
  return { bdf: b(HB_OF(u), port), kind: 'rootport', speed: 32, children: [up] };
}

/** The host bridge bus of the NUMA node an upstream port belongs to. */
const HB_OF = (u: number): number => (u < 0xa0 ? 0x89 : 0xa7);

function numa(id: number, ups: number[], firstNic: number): GenHostBridge {
  return { domainBus: `0000:${HB_OF(ups[0]!).toString(16)}`, numaNode: id, devices: ups.map((u, i) => pair(u, firstNic + i, i)) };
}

export const node: GenNode = {
  hostBridges: [numa(0, [0x8a, 0x8e, 0x92, 0x96], 4), numa(1, [0xa8, 0xac, 0xb0, 0xb4], 0)],
  numa: [{ id: 0, cpus: '0-79' }, { id: 1, cpus: '80-159' }],
  cpuModalias: 'cpu:type:x86,ven0000fam0006mod006A:feature:,0000,0001,0002,0003',
  driver: { version: '535.129.03', open: false },
  hostname: 'nebius-h100-vm',
};
