// pcie-relaxed-ordering: Relaxed Ordering (Device Control bit 4, PCIe Base 6.3 §7.5.3.4) on each RDMA adapter. The
// kernel clears it below root ports quirked PCI_DEV_FLAGS_NO_RELAXED_ORDERING (drivers/pci/probe.c,
// pci_configure_relaxed_ordering); mlx5 enables relaxed-ordering reads only when it is set
// (mlx5e_mkey_set_relaxed_ordering), and NCCL uses it by default (NCCL_IB_PCI_RELAXED_ORDERING).
import { ABSENT, factText, present, within } from '../model/fact.js';
import { topoMatrix } from '../topo/matrix.js';
import type { Finding } from '../model/finding.js';
import { defineCheck, finder } from './types.js';
import WORDING from './pcie-relaxed-ordering.json' with { type: 'json' };

const f = finder('pcie-relaxed-ordering', WORDING.codes);

/**
 * Root ports whose adapters the kernel turns Relaxed Ordering off for (drivers/pci/quirks.c,
 * quirk_relaxedordering_disable: a flow-control credit erratum of the Broadwell-EP and Haswell-EP root complexes,
 * 8086:6f01-6f0e and 2f01-2f0e, and an ordering bug of AMD's A1100, 1022:1a00-1a02); probe.c then clears the bit on
 * every device below them. Off there is the kernel's doing, and right.
 */
function quirked(vendor: number, device: number): boolean {
  if (vendor === 0x8086) return (device >= 0x6f01 && device <= 0x6f0e) || (device >= 0x2f01 && device <= 0x2f0e);
  return vendor === 0x1022 && device >= 0x1a00 && device <= 0x1a02;
}

/**
 * ConnectX and BlueField SR-IOV VFs (pci.ids: the Mellanox "Virtual Function" ids). A VF's Enable Relaxed Ordering
 * bit is RsvdP and reads 0 (PCIe Base 6.3 §9.3.5.4; probe.c pci_configure_relaxed_ordering says so): its PF's setting
 * applies. In a VM the VF's IDs are shown (vfio fills them in), where on the host its header reads FFFFh.
 */
const MLX_VFS = new Set([0x1002, 0x1004, 0x1012, 0x1014, 0x1016, 0x1018, 0x101a, 0x101c, 0x101e, 0x0263, 0xa2d3]);
/** GPU↔NIC classes whose peer traffic stays below a switch, where the adapter's read ordering decides bandwidth. */
const NEAR = new Set(['PIX', 'PXB']);

export default defineCheck('pcie-relaxed-ordering', WORDING, {
  run({ inv, baseline }): Finding[] {
    const m = topoMatrix(inv);
    const nics = m.nics.filter((n) => n.bdf !== null);
    if (nics.length === 0) return [f('ro-na', 'skip', 'node', 'not applicable: no RDMA adapter with a PCI function')];
    return nics.map((n) => {
      const bdf = n.bdf!;
      const cfg = inv.pci.get(bdf)?.config ?? ABSENT;
      const pcie = within(cfg, (c) => c.pcie, 'config space absent');
      const devCtl = within(pcie, (p) => present(p.devCtl), 'no PCI Express capability');
      if (devCtl.state !== 'present') return f('ro-unreadable', 'skip', bdf, `${n.name}: Device Control ${factText(devCtl)}`);
      const on = devCtl.value.relaxedOrdering;
      const d = inv.pci.get(bdf);
      const rootBdf = d?.bridges[0];
      const root = rootBdf === undefined ? undefined : inv.pci.get(rootBdf);
      const ids = root?.vendor.state === 'present' && root.device.state === 'present' ? [root.vendor.value, root.device.value] as const : null;
      const rootQuirked = ids !== null && quirked(ids[0], ids[1]);
      const ref = baseline?.devices.find((d) => d.bdf === bdf && d.role === 'nic')?.relaxedOrdering;
      const actual = on ? 'on' : 'off';
      if (ref !== undefined) {
        if (ref && !on) return f('ro-off', 'fail', bdf, `${n.name}: DevCtl RlxdOrd- where the reference had RlxdOrd+`, 'on', actual);
        return f('ro-ok', 'pass', bdf, `${n.name}: DevCtl RlxdOrd${on ? '+' : '-'}, as the reference`, ref ? 'on' : 'off', actual);
      }
      // Without a reference: off in a VF tells nothing (a reference VF reads off as well: compared above, as it was).
      if (!on && d?.vendor.state === 'present' && d.vendor.value === 0x15b3 && d.device.state === 'present' && MLX_VFS.has(d.device.value))
        return f('ro-vf-unknown', 'skip', bdf, `${n.name}: an SR-IOV VF (0x15b3:0x${d.device.value.toString(16).padStart(4, '0')}), whose Relaxed Ordering bit is reserved and reads 0: its PF's setting applies, which is not read here`);
      // Off below a root port the kernel quirks is the kernel's doing.
      if (!on && rootQuirked) return f('ro-quirk-ok', 'pass', bdf, `${n.name}: DevCtl RlxdOrd-, cleared by the kernel below root port ${rootBdf} (${ids!.map((x) => x.toString(16).padStart(4, '0')).join(':')}, a completion erratum: quirks.c)`, 'off below a quirked root port', actual);
      // Off only matters where a GPU shares the adapter's switch (PIX/PXB).
      const near = m.gpus.filter((g) => NEAR.has(m.cell(g.label, n.label))).map((g) => g.bdf);
      if (!on && near.length) return f('ro-off', 'warn', bdf, `${n.name}: DevCtl RlxdOrd- with GPU${near.length > 1 ? 's' : ''} ${near.slice(0, 2).join(', ')}${near.length > 2 ? ` +${near.length - 2} more` : ''} under the same switch`, 'on', actual);
      return f('ro-ok', 'pass', bdf, `${n.name}: DevCtl RlxdOrd${on ? '+' : '-'}${on ? '' : ' (no GPU under the same switch)'}`, on ? 'on' : 'on where a GPU is near', actual);
    });
  },
});
