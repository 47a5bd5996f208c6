// 8x H100 SXM + 8 ConnectX-7, two sockets: the tree behind sglang issue #30401's `nvidia-smi topo -m`.
// Modelled on the DGX/HGX H100 layout where each GPU shares a PCIe Gen5 switch with one ConnectX-7 (NVIDIA's GPUDirect
// Storage guide, "Validate PCI Switch System Topology": GPUs and NICs under the same switch on DGX; the DGX BasePOD
// deployment guide lists the DGX H100 compute NICs at 18,40,4f,5e | 9a,c0,ce,dc:00.0, four per socket). The output
// gives no bus ids; the GPU ones are those an 8x H100 80GB HBM3 HGX node's `nvidia-smi -q` prints
// (18,2A,3A,5D,9A,AB,BA,DB), NICs sit one bus above; the CPU split (0-47,96-143 | 48-95,144-191) is the output's.
// Each GPU+NIC pair has its own root port and host bridge (Sapphire Rapids IIO stack): PIX inside a pair,
// NODE between pairs of one socket, SYS across sockets.
import type { GenDevice, GenHostBridge, GenNode } from '../sysfs-tree.js';

export const source = 'sglang30401_8xH100_8nic.txt';

const GPU_BUS = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb];
const b = (bus: number, dev = 0): string => `0000:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.0`;

/** Host bridge bus h: root port h:01.0 → PEX890xx upstream (h+1) → downstream ports (h+2):00.0 GPU, (h+2):01.0 NIC. */
function pair(i: number): GenHostBridge {
  const g = GPU_BUS[i]!;
  const h = g - 3;
  const gpu: GenDevice = { bdf: b(g), kind: 'gpu', device: 0x2330, subsystem: [0x10de, 0x16c1], speed: 32, iommuGroup: 20 + i * 4, ats: false };
  const nic: GenDevice = {
    bdf: b(g + 1), kind: 'nic', device: 0x1021, subsystem: [0x15b3, 0x0041], speed: 32, iommuGroup: 21 + i * 4, ats: false,
    ib: { name: `mlx5_${i}`, fwVer: '28.39.1002' },
  };
  return {
    domainBus: `0000:${h.toString(16)}`,
    numaNode: i < 4 ? 0 : 1,
    devices: [{
      bdf: b(h, 1), kind: 'rootport', speed: 32, acsCtl: 0x001d, children: [{
        bdf: b(h + 1), kind: 'switch-up', speed: 32, children: [
          { bdf: b(h + 2, 0), kind: 'switch-down', speed: 32, acsCtl: 0, children: [gpu] },
          { bdf: b(h + 2, 1), kind: 'switch-down', speed: 32, acsCtl: 0, children: [nic] },
        ],
      }],
    }],
  };
}

export const node: GenNode = {
  hostBridges: Array.from({ length: 8 }, (_, i) => pair(i)),
  numa: [{ id: 0, cpus: '0-47,96-143' }, { id: 1, cpus: '48-95,144-191' }],
  driver: { version: '570.133.20', open: true },
  kernel: '5.15.0-136-generic',
  peermem: false,
  memlockKiB: 'unlimited',
  iommu: { units: ['dmar0', 'dmar1', 'dmar2', 'dmar3', 'dmar4', 'dmar5', 'dmar6', 'dmar7'], groupType: 'identity' },
  cmdline: 'BOOT_IMAGE=/boot/vmlinuz-5.15.0-136-generic root=UUID=7d1e6a43-0c55-4a47-9b1e-2f7e8b0f5c11 ro intel_iommu=on iommu=pt',
  // Sapphire Rapids, as the IIO stacks above: family 6, model 0x8F (the kernel's INTEL_SAPPHIRERAPIDS_X), the x86
  // modalias's form (arch/x86/kernel/cpu print_cpu_modalias; the IBM gx3d model carries the same CPU).
  cpuModalias: 'cpu:type:x86,ven0000fam0006mod008F:feature:,0000,0001,0002,0003',
};
