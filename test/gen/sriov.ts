// SR-IOV VFs beside each RDMA PF of a generated node, as topologies/hgx-h100-sriov.ts models a ConnectX-7 in legacy
// mode with ARI (PCIe Base 6.3 §6.13; ConnectX-7 firmware release notes v28.46.1006): each VF a function on its PF's
// bus after the functions already there, device id 0x101e (pci.ids; the IBM Cloud gx3d capture's VFs), bound to
// mlx5_core and so an RDMA device of its own, named after every PF in probe order (the PFs probe first), in an IOMMU
// group of its own where its PF has one, with its physfn link to the PF (drivers/pci/iov.c).
import type { GenDevice, GenNode } from './sysfs-tree.js';

const ridOf = (bdf: string): number => parseInt(bdf.slice(8, 10), 16) * 8 + Number(bdf.slice(11));
const bdfOf = (bus: string, rid: number): string => `${bus}:${(rid >> 3).toString(16).padStart(2, '0')}.${rid & 7}`;

/** `node` with `perPf` VFs after each adapter PF (a device with `ib` and no physfn). */
export function withVfs(node: GenNode, perPf: number): GenNode {
  if (!Number.isInteger(perPf) || perPf < 1 || perPf > 127) throw new Error(`perPf ${perPf}: 1..127 (the firmware's limit per PF)`);
  const out = structuredClone(node);
  const pfs: GenDevice[] = [];
  const walk = (ds: GenDevice[]): void => ds.forEach((d) => { if (d.ib && d.physfn === undefined) pfs.push(d); walk(d.children ?? []); });
  out.hostBridges.forEach((hb) => walk(hb.devices));
  let name = pfs.length;
  let group = 2000;
  const add = (ds: GenDevice[]): GenDevice[] => {
    const used = new Set(ds.map((d) => `${d.bdf.slice(0, 7)}/${ridOf(d.bdf)}`));
    return ds.flatMap((d) => {
      const kids = d.children ? { ...d, children: add(d.children) } : d;
      if (!pfs.includes(d)) return [kids];
      const bus = d.bdf.slice(0, 7);
      const vfs: GenDevice[] = [];
      for (let rid = ridOf(d.bdf) + 1; vfs.length < perPf; rid++) {
        if (rid > 255) throw new Error(`${d.bdf}: no room for ${perPf} VFs on bus ${bus}`);
        if (used.has(`${bus}/${rid}`)) continue;
        used.add(`${bus}/${rid}`);
        vfs.push({ ...d, bdf: bdfOf(bus, rid), device: 0x101e, physfn: d.bdf, iommuGroup: d.iommuGroup === undefined ? undefined : group++, ib: { ...d.ib!, name: `mlx5_${name++}`, nodeGuid: undefined } as GenDevice['ib'], children: undefined, vpd: undefined });
      }
      return [kids, ...vfs];
    });
  };
  out.hostBridges = out.hostBridges.map((hb) => ({ ...hb, devices: add(hb.devices) }));
  return out;
}
