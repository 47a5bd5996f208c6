// The HGX H100 tree of sglang30401-hgx-h100.ts with SR-IOV on at the adapters' limit: each ConnectX-7 a dual-port
// card (two PFs, functions 0 and 1 of its bus) with 127 VFs per PF, every VF bound to mlx5_core on the host and so an
// RDMA device of its own. 127 VFs per PF (254 functions per dual-port device) is the legacy-mode limit the ConnectX-7
// firmware release notes give (v28.46.1006, Known Issues, "VF Network Function Limitations in SR-IOV Legacy Mode").
// With ARI (PCIe Base 6.3 §6.13) a bus holds 256 functions: PF0, PF1, then the VFs at routing IDs 2..255.
// 8 × 256 = 2,048 RDMA functions beside 8 GPUs: a real configuration that makes every per-NIC loop 256 times longer.
import type { GenDevice, GenNode } from '../sysfs-tree.js';
import { node as hgx } from './sglang30401-hgx-h100.js';

export const source = 'NVIDIA ConnectX-7 firmware release notes v28.46.1006, Known Issues (127 VF per PF, 254 functions); sglang30401_8xH100_8nic.txt';

const rid = (bus: string, fn: number): string => `${bus}:${(fn >> 3).toString(16).padStart(2, '0')}.${fn & 7}`;

/** The HGX tree with `vfsPerPf` VFs on each of two PFs per adapter (default: the firmware's 127). */
export function sriovNode(vfsPerPf = 127): GenNode {
  if (vfsPerPf < 0 || vfsPerPf > 127) throw new Error(`vfsPerPf ${vfsPerPf}: 0..127 (256 routing IDs per bus)`);
  let ibIndex = 0;
  let group = 1000;
  const hostBridges = hgx.hostBridges.map((hb, i) => {
    const root = hb.devices[0]!;
    const up = root.children![0]!;
    const [gpuPort, nicPort] = up.children!;
    const pf0 = nicPort!.children![0]!;
    const bus = pf0.bdf.slice(0, 7);
    const fn = (f: number, kind: 'pf' | 'vf'): GenDevice => ({
      ...pf0,
      bdf: rid(bus, f),
      // ConnectX-7 VF device id 0x101e (pci.ids), as the IBM Cloud gx3d capture's VFs (nccl_topo_xml/ibm_cloud_gx3d_*).
      device: kind === 'pf' ? 0x1021 : 0x101e,
      iommuGroup: kind === 'pf' && f === 0 ? pf0.iommuGroup! : group++,
      ib: { name: kind === 'pf' && f === 0 ? `mlx5_${i}` : `mlx5_${8 + ibIndex++}`, fwVer: '28.39.1002' },
    });
    // The first vfsPerPf VFs are PF0's, the rest PF1's (each VF's physfn).
    const fns = [fn(0, 'pf'), fn(1, 'pf'), ...Array.from({ length: 2 * vfsPerPf }, (_, k) => ({ ...fn(2 + k, 'vf'), physfn: rid(bus, k < vfsPerPf ? 0 : 1) }))];
    return { ...hb, devices: [{ ...root, children: [{ ...up, children: [gpuPort!, { ...nicPort!, children: fns }] }] }] };
  });
  return { ...hgx, hostBridges };
}
