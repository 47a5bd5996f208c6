// GB300-like compute tray without DMA Direct: two Grace sockets (aarch64), four Blackwell Ultra GPUs and four
// ConnectX-8, each GPU and each CX8 alone on its own Grace root port (the GB200/GB300 NVL72 tray's PCIe view: GPUs at
// 0008/0009/0018/0019:01:00.0, NICs on their own segments), grouped by NUMA node as rdma_topo's "NUMA-based" complexes.
// The "GB300-like tray"; the ACS words are the kernel's isolation set the platform requires (healthy).
// See ../PROVENANCE-newest.md.
import type { GenDevice, GenHostBridge, GenNode } from '../sysfs-tree.js';

export const source = 'GB200/GB300 NVL72 compute tray PCIe layout (GPUs and NICs on Grace root ports)';

const dom = (d: number): string => d.toString(16).padStart(4, '0');
const graceRp = (d: number, child: GenDevice): GenDevice => ({ bdf: `${dom(d)}:00:00.0`, kind: 'rootport', vendor: 0x10de, device: 0x22b1, speed: 32, acsCtl: 0x001d, children: [child] });
const seg = (d: number, numa: number, child: GenDevice): GenHostBridge => ({ domainBus: `${dom(d)}:00`, numaNode: numa, devices: [graceRp(d, child)] });

export const GPU_DOMS = [0x0008, 0x0009, 0x0018, 0x0019];
export const NIC_DOMS = [0x0000, 0x0002, 0x0010, 0x0012];

/** `gpuDevice`: the GPU's PCI device id (GB300 by default); the GH200 tree reuses the shape. */
export function tray(gpuDevice = 0x31c2, nicDevice = 0x1023): GenHostBridge[] {
  return [
    ...NIC_DOMS.map((d, i) => seg(d, i >> 1, {
      bdf: `${dom(d)}:01:00.0`, kind: 'nic', device: nicDevice, subsystem: [0x15b3, 0x0057], speed: 32, iommuGroup: 10 + i,
      vpd: { name: 'NVIDIA ConnectX-8 SuperNIC', sn: `MT2447XZ1${i}B1`, v3: `7a90c4d2-1e35-4b8f-8c0d-00000000001${i}` },
      ib: { name: `mlx5_${i}`, fwVer: '40.46.1006' },
    })),
    ...GPU_DOMS.map((d, i) => seg(d, i >> 1, { bdf: `${dom(d)}:01:00.0`, kind: 'gpu', device: gpuDevice, subsystem: [0x10de, 0x21bf], speed: 32, iommuGroup: 20 + i, bar1GiB: 512 })),
  ];
}

export const node: GenNode = {
  hostBridges: tray(),
  numa: [{ id: 0, cpus: '0-71' }, { id: 1, cpus: '72-143' }],
  driver: { version: '580.82.07', open: true, gcc: 'gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)' },
  kernel: '6.14.0-1013-nvidia-64k',
  procVersion: 'Linux version 6.14.0-1013-nvidia-64k (buildd@bos03-arm64-060) (aarch64-linux-gnu-gcc-13 (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0, GNU ld (GNU Binutils for Ubuntu) 2.42) #13-Ubuntu SMP PREEMPT_DYNAMIC Tue Sep  2 16:02:50 UTC 2025\n',
  peermem: false,
  memlockKiB: 'unlimited',
  iommu: { units: ['smmu3.0x0000000011000000', 'smmu3.0x0000000012000000', 'smmu3.0x0000001011000000', 'smmu3.0x0000001012000000'], groupType: 'identity' },
  cmdline: 'BOOT_IMAGE=/boot/vmlinuz-6.14.0-1013-nvidia-64k root=UUID=0b6e1f3c-8d2a-4c5e-9f71-2a4b6c8d0e13 ro iommu.passthrough=1',
  hostname: 'gb300-tray02',
};
