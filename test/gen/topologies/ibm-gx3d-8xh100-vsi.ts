// IBM Cloud gx3d-160x1792x8h100 virtual server: the PCI tree behind the NCCL topology dump IBM publishes for it
// (test/fixtures/nccl_topo_xml/ibm_cloud_gx3d_8xH100_vsi_topo_roce_cx7_vf.xml, SOURCES.md there).
// From the dump: bus ids, classes, vendor/device/subsystem ids, the NUMA node of each group, the CPU masks
// (160 CPUs, 0-79 | 80-159), the CPU (GenuineIntel family 6 model 143), the adapters' names and 200G rate.
// Modelled, because NCCL's walk does not write them (it rewinds two levels, so a switch's downstream port and the
// root port above an upstream port never get an element): a root port under each TI XIO3130 upstream port
// (0x104c:0x8232), and the two downstream ports (0x104c:0x8233, the XIO3130's downstream id) on the bus between.
// NCCL takes the slower and narrower of a device's max link and its port's: the upstream port's "2.5 GT/s PCIe" x1
// is its own (root port x16 Gen5 above it); the endpoints' "32.0 GT/s PCIe" with width 0 needs a width of 0 on one
// side of their link. The dump does not say which side; here the endpoints (a VF and a passed-through GPU in a
// VM, whose emulated Link Capabilities report no width).
import type { GenDevice, GenHostBridge, GenNode } from '../sysfs-tree.js';

export const source = 'ibm_cloud_gx3d_8xH100_vsi_topo_roce_cx7_vf.xml';

const USP = [0xa1, 0xab, 0xb5, 0xbf, 0xc9, 0xd3, 0xdd, 0xe7];
const b = (bus: number, dev = 0): string => `0000:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.0`;

function group(i: number): GenHostBridge {
  const u = USP[i]!;
  const nic: GenDevice = {
    bdf: b(u + 2), kind: 'nic', device: 0x101e, classCode: 0x020000, subsystem: [0x15b3, 0x0127], speed: 32, width: 0,
    ib: { name: `mlx5_${7 - i}`, ports: [{ state: '4: ACTIVE', physState: '5: LinkUp', rate: '200 Gb/sec (4X HDR)', linkLayer: 'Ethernet' }] },
  };
  const gpu: GenDevice = { bdf: b(u + 3), kind: 'gpu', device: 0x2330, classCode: 0x030200, subsystem: [0x10de, 0x16c1], speed: 32, width: 0 };
  const down = (dev: number, child: GenDevice): GenDevice => ({ bdf: b(u + 1, dev), kind: 'switch-down', vendor: 0x104c, device: 0x8233, subsystem: [0, 0], speed: 32, children: [child] });
  return {
    domainBus: `0000:${(u - 1).toString(16)}`,
    numaNode: i < 4 ? 0 : 1,
    devices: [{
      bdf: b(u - 1, 1), kind: 'rootport', speed: 32, children: [{
        bdf: b(u), kind: 'switch-up', vendor: 0x104c, device: 0x8232, subsystem: [0, 0], speed: 2.5, width: 1,
        children: [down(0, nic), down(1, gpu)],
      }],
    }],
  };
}

export const node: GenNode = {
  hostBridges: Array.from({ length: 8 }, (_, i) => group(i)),
  numa: [{ id: 0, cpus: '0-79' }, { id: 1, cpus: '80-159' }],
  cpuModalias: 'cpu:type:x86,ven0000fam0006mod008F:feature:,0000,0001,0002,0003',
  driver: { version: '550.90.07', open: true },
  hostname: 'gx3d-h100',
};
