// HGX B300 (x86 host) with eight ConnectX-8 SuperNICs on the GPU baseboard, each CX8's integrated PCIe switch
// carrying its GPU "inline": root port → CX8 switch → (CX8 network function | nested CX switch → B300 GPU).
// The NIC bus ids are those NVIDIA's Blackwell Ultra HGX VM guide lists (17,39,5f,70,97,b9,dc,ed:00.0); the GPU sits
// three buses below. Bare metal: the CX8 exposes no ATS, the complex's ports carry no ACS bits (rdma_topo's inline
// rule without virtualization) and the whole segment is one IOMMU group. See ../PROVENANCE-newest.md.
import type { GenDevice, GenHostBridge, GenNode } from '../sysfs-tree.js';

export const source = 'NVIDIA AI Enterprise, optimizing VM configuration on Blackwell Ultra HGX (appendix, mlxconfig output)';

export const NIC_BUS = [0x17, 0x39, 0x5f, 0x70, 0x97, 0xb9, 0xdc, 0xed];
const b = (bus: number, dev = 0): string => `0000:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.0`;
const cx = (bdf: string, kind: 'switch-up' | 'switch-down', children: GenDevice[], acsCtl?: number): GenDevice =>
  ({ bdf, kind, vendor: 0x15b3, device: 0x197c, speed: 32, children, ...(acsCtl !== undefined ? { acsCtl } : {}) });

/** Root port h:01.0 → CX8 up (h+1) → down (h+2):00.0 → NIC (h+3); down (h+2):01.0 → CX up (h+4) → down (h+5) → GPU (h+6). */
function complex(i: number, ats?: boolean): GenHostBridge {
  const n = NIC_BUS[i]!;
  const h = n - 3;
  const nic: GenDevice = { bdf: b(n), kind: 'nic', device: 0x1023, subsystem: [0x15b3, 0x0057], speed: 32, iommuGroup: 40 + i, ...(ats === undefined ? {} : { ats }),
    vpd: { name: 'NVIDIA ConnectX-8 SuperNIC', sn: `MT2503XZ0${i}C1`, v3: `3c5e7a90-2b4d-4f61-8a3c-00000000002${i}` }, ib: { name: `mlx5_${i}`, fwVer: '40.46.1006' } };
  const gpu: GenDevice = { bdf: b(h + 6), kind: 'gpu', device: 0x3182, subsystem: [0x10de, 0x20e4], speed: 32, iommuGroup: 40 + i, bar1GiB: 512 };
  return {
    domainBus: `0000:${h.toString(16)}`, numaNode: i < 4 ? 0 : 1,
    devices: [{ bdf: b(h, 1), kind: 'rootport', speed: 32, acsCtl: 0, children: [cx(b(h + 1), 'switch-up', [
      cx(b(h + 2, 0), 'switch-down', [nic], 0),
      cx(b(h + 2, 1), 'switch-down', [cx(b(h + 4), 'switch-up', [cx(b(h + 5), 'switch-down', [gpu], 0)])], 0),
    ])] }],
  };
}

export function hgxB300(ats?: boolean): GenNode {
  return {
    hostBridges: Array.from({ length: 8 }, (_, i) => complex(i, ats)),
    numa: [{ id: 0, cpus: '0-59,120-179' }, { id: 1, cpus: '60-119,180-239' }],
    driver: { version: '580.82.07', open: true },
    kernel: '6.8.0-79-generic',
    peermem: false,
    memlockKiB: 'unlimited',
    iommu: { units: ['dmar0', 'dmar1', 'dmar2', 'dmar3', 'dmar4', 'dmar5', 'dmar6', 'dmar7'], groupType: 'identity' },
    cmdline: 'BOOT_IMAGE=/boot/vmlinuz-6.8.0-79-generic root=UUID=9e2b7c41-5d0a-4f3e-8b6c-1d2e3f405162 ro intel_iommu=on iommu=pt',
    hostname: 'hgx-b300-01',
  };
}

export const node: GenNode = hgxB300();
