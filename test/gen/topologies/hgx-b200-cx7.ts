// HGX B200 (x86 host, DGX B200-like) with eight ConnectX-7: the H100 generation's layout, each B200 sharing a PCIe
// Gen5 switch (Broadcom PEX) with one ConnectX-7 below a root port. DGX B200 user guide: eight single-port CX7 for the
// compute fabric, PCIe Gen5 switches on the GPU tray; bus ids as in the HGX H100 tree (sglang30401-hgx-h100.ts).
// No ConnectX switch, no Grace: rdma_topo supports no topology here, so the classic rule (no redirect) applies.
// See ../PROVENANCE-newest.md.
import type { GenNode } from '../sysfs-tree.js';
import { node as H100 } from './sglang30401-hgx-h100.js';
import { allDevices } from '../sysfs-tree.js';

export const source = 'DGX B200 user guide (network ports, PCIe switches); layout of sglang30401-hgx-h100';

export const node: GenNode = (() => {
  const n = structuredClone(H100);
  for (const d of allDevices(n)) if (d.kind === 'gpu') Object.assign(d, { device: 0x2901, subsystem: [0x10de, 0x1999], bar1GiB: 256 });
  return { ...n, driver: { version: '580.82.07', open: true }, kernel: '6.8.0-79-generic', hostname: 'hgx-b200-01',
    cmdline: 'BOOT_IMAGE=/boot/vmlinuz-6.8.0-79-generic root=UUID=2c4e6a80-1b3d-4f5a-9c7e-0d1e2f304152 ro intel_iommu=on iommu=pt' };
})();
