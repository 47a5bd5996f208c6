// GH200 Grace Hopper node: one Grace socket (aarch64), one H100 96GB (GH200) whose PCIe function sits on a Grace root
// port at 0009:01:00.0, and one ConnectX-7 on another Grace root port (0000:01:00.0), as GH200 nodes list them.
// rdma_topo sees a "NUMA-based" complex: Grace root ports with the kernel's isolation set, the NIC without ATS,
// every GPU and NIC function in its own IOMMU group. Kernel 6.8 (Ubuntu 24.04 nvidia-64k). See ../PROVENANCE-newest.md.
import type { GenNode } from '../sysfs-tree.js';

export const source = 'GH200 node PCIe layout (GPU and ConnectX-7 on Grace root ports)';

export const node: GenNode = {
  hostBridges: [
    { domainBus: '0000:00', numaNode: 0, devices: [{ bdf: '0000:00:00.0', kind: 'rootport', vendor: 0x10de, device: 0x22b2, speed: 32, acsCtl: 0x001d, children: [
      { bdf: '0000:01:00.0', kind: 'nic', device: 0x1021, subsystem: [0x15b3, 0x0041], speed: 32, iommuGroup: 3,
        vpd: { name: 'NVIDIA ConnectX-7 HHHL Adapter Card, 400GbE / NDR IB (default mode), Single-port OSFP, PCIe 5.0 x16', sn: 'MT2339X01234', v3: '1f0c9b2e-6a4d-4c73-8e15-0a1b2c3d4e5f' },
        ib: { name: 'mlx5_0', fwVer: '28.41.1000' } },
    ] }] },
    { domainBus: '0009:00', numaNode: 0, devices: [{ bdf: '0009:00:00.0', kind: 'rootport', vendor: 0x10de, device: 0x22b2, speed: 32, acsCtl: 0x001d, children: [
      { bdf: '0009:01:00.0', kind: 'gpu', device: 0x2342, subsystem: [0x10de, 0x16eb], speed: 32, iommuGroup: 9, bar1GiB: 128 },
    ] }] },
  ],
  numa: [{ id: 0, cpus: '0-71' }],
  driver: { version: '570.133.20', open: true, gcc: 'gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)' },
  kernel: '6.8.0-1014-nvidia-64k',
  procVersion: 'Linux version 6.8.0-1014-nvidia-64k (buildd@bos03-arm64-012) (aarch64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0, GNU ld (GNU Binutils for Ubuntu) 2.42) #15-Ubuntu SMP PREEMPT_DYNAMIC Mon Aug 19 11:22:36 UTC 2024\n',
  peermem: false,
  memlockKiB: 'unlimited',
  iommu: { units: ['smmu3.0x0000000011000000', 'smmu3.0x0000000012000000'], groupType: 'DMA-FQ' },
  hostname: 'gh200-01',
};
