// GB300 compute tray with ConnectX-8 "Data Direct" (DMA Direct): two Grace sockets (aarch64), four Blackwell Ultra
// GPUs, four ConnectX-8 on two dual-CX8 mezzanine boards. Each GPU sits below nested ConnectX-8 switches on its own
// Grace root port, beside the CX8's DMA function; the CX8's network function is on another Grace root port.
// Modelled on NVIDIA's "Grace Blackwell with CX8 GPUDirect RDMA guide" (rdma_topo topo output: NIC 0000:03:00.0 with
// GPU 0009:06:00.0 and DMA 0009:03:00.0; NIC 0002:03:00.0 with GPU 0008:06:00.0; board "NVIDIA Dual ConnectX-8
// SuperNIC C8280Z Mezzanine Board"; Linux 6.14-nvidia-64k). Socket 1's domains (0010/0012, 0018/0019) follow
// socket 0's numbering + 0x10, an assumption. The ACS words are those the platform requires (healthy).
// See ../PROVENANCE-newest.md.
import type { GenDevice, GenHostBridge, GenNode } from '../sysfs-tree.js';

export const source = 'NVIDIA Grace Blackwell CX8 GPUDirect RDMA guide (rdma_topo topo)';

const MLX = 0x15b3;
const CX_SWITCH = 0x197c;
const b = (dom: number, bus: number, dev = 0): string => `${dom.toString(16).padStart(4, '0')}:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.0`;
const graceRp = (dom: number, acsCtl: number, children: GenDevice[], iommuGroup?: number): GenDevice =>
  ({ bdf: b(dom, 0), kind: 'rootport', vendor: 0x10de, device: 0x22b1, speed: 32, acsCtl, children, ...(iommuGroup !== undefined ? { iommuGroup } : {}) });
const cx = (bdf: string, kind: 'switch-up' | 'switch-down', children: GenDevice[], acsCtl?: number, iommuGroup?: number): GenDevice =>
  ({ bdf, kind, vendor: MLX, device: CX_SWITCH, speed: 32, children, ...(acsCtl !== undefined ? { acsCtl } : {}), ...(iommuGroup !== undefined ? { iommuGroup } : {}) });

/** The UUID each CX8's PF and DMA function carry in VPD V3, and the board serials (two CX8 per board). */
const uuid = (i: number): string => `5d1c0a7e-3b52-4e1f-9a4c-00000000000${i}`;
const board = (i: number): string => `MT2447XZ0${i >> 1}A1`;
const vpd = (i: number): GenDevice['vpd'] => ({ name: 'NVIDIA Dual ConnectX-8 SuperNIC C8280Z Mezzanine Board for GB300 NVL72 systems', pn: '900-9X8BZ-0057-ST0', sn: board(i), v3: uuid(i) });

export interface Cx8Pair { gpuDom: number; nicDom: number; numa: number }
export const PAIRS: Cx8Pair[] = [
  { gpuDom: 0x0009, nicDom: 0x0000, numa: 0 }, { gpuDom: 0x0008, nicDom: 0x0002, numa: 0 },
  { gpuDom: 0x0019, nicDom: 0x0010, numa: 1 }, { gpuDom: 0x0018, nicDom: 0x0012, numa: 1 },
];

/**
 * GPU side: Grace RP D:00:00.0 (SrcValid off: the whole segment is one IOMMU group) → CX8 switch up D:01:00.0 →
 * down D:02:00.0 → DMA function D:03:00.0; down D:02:01.0 → second CX switch D:04:00.0 → D:05:00.0 → GPU D:06:00.0.
 */
function gpuSide(p: Cx8Pair, i: number): GenHostBridge {
  const D = p.gpuDom;
  const g = 100 + i; // one IOMMU group for the whole segment
  const dma: GenDevice = { bdf: b(D, 3), kind: 'other', vendor: MLX, device: 0x2100, classCode: 0x020700, driver: 'mlx5_data_direct', speed: 32, iommuGroup: g, vpd: vpd(i) };
  const gpu: GenDevice = { bdf: b(D, 6), kind: 'gpu', device: 0x31c2, subsystem: [0x10de, 0x21bf], speed: 32, iommuGroup: g, bar1GiB: 512 };
  return {
    domainBus: `${D.toString(16).padStart(4, '0')}:00`, numaNode: p.numa, devices: [graceRp(D, 0x001c, [
      cx(b(D, 1), 'switch-up', [
        cx(b(D, 2, 0), 'switch-down', [dma], 0x0019, g),
        cx(b(D, 2, 1), 'switch-down', [cx(b(D, 4), 'switch-up', [cx(b(D, 5), 'switch-down', [gpu], 0x001d, g)], undefined, g)], 0x0015, g),
      ], undefined, g),
    ], g)],
  };
}

/** NIC side: Grace RP N:00:00.0 → CX8 switch up N:01:00.0 → down N:02:00.0 → ConnectX-8 PF N:03:00.0. */
function nicSide(p: Cx8Pair, i: number): GenHostBridge {
  const N = p.nicDom;
  const nic: GenDevice = { bdf: b(N, 3), kind: 'nic', device: 0x1023, subsystem: [MLX, 0x0057], speed: 32, iommuGroup: 10 + i, vpd: vpd(i), ib: { name: `mlx5_${i}`, fwVer: '40.46.1006' } };
  return {
    domainBus: `${N.toString(16).padStart(4, '0')}:00`, numaNode: p.numa,
    devices: [graceRp(N, 0x001d, [cx(b(N, 1), 'switch-up', [cx(b(N, 2), 'switch-down', [nic], 0x001d)])])],
  };
}

export const node: GenNode = {
  hostBridges: PAIRS.flatMap((p, i) => [nicSide(p, i), gpuSide(p, i)]),
  numa: [{ id: 0, cpus: '0-71' }, { id: 1, cpus: '72-143' }],
  driver: { version: '580.82.07', open: true, gcc: 'gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)' },
  kernel: '6.14.0-1013-nvidia-64k',
  procVersion: 'Linux version 6.14.0-1013-nvidia-64k (buildd@bos03-arm64-060) (aarch64-linux-gnu-gcc-13 (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0, GNU ld (GNU Binutils for Ubuntu) 2.42) #13-Ubuntu SMP PREEMPT_DYNAMIC Tue Sep  2 16:02:50 UTC 2025\n',
  peermem: false,
  memlockKiB: 'unlimited',
  iommu: { units: ['smmu3.0x0000000011000000', 'smmu3.0x0000000012000000', 'smmu3.0x0000001011000000', 'smmu3.0x0000001012000000'], groupType: 'identity' },
  cmdline: 'BOOT_IMAGE=/boot/vmlinuz-6.14.0-1013-nvidia-64k root=UUID=0b6e1f3c-8d2a-4c5e-9f71-2a4b6c8d0e13 ro iommu.passthrough=1 init_on_alloc=0',
  hostname: 'gb300-tray01',
  // Grace (aarch64): the arm64 modalias's form (drivers/base/cpu.c, cpu_show_modalias with the hwcap feature numbers).
  cpuModalias: 'cpu:type:aarch64:feature:,0000,0001,0002,0003,0004,0005,0006,0007',
};
