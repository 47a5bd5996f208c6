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
      const ref = baseline?.devices.find((d) => d.bdf === bdf && d.role === 'nic')?.relaxedOrdering;
      const actual = on ? 'on' : 'off';
      if (ref !== undefined) {
        if (ref && !on) return f('ro-off', 'fail', bdf, `${n.name}: DevCtl RlxdOrd- where the reference had RlxdOrd+`, 'on', actual);
        return f('ro-ok', 'pass', bdf, `${n.name}: DevCtl RlxdOrd${on ? '+' : '-'}, as the reference`, ref ? 'on' : 'off', actual);
      }
      // Without a reference: off only matters where a GPU shares the adapter's switch (PIX/PXB).
      const near = m.gpus.filter((g) => NEAR.has(m.cell(g.label, n.label))).map((g) => g.bdf);
      if (!on && near.length) return f('ro-off', 'warn', bdf, `${n.name}: DevCtl RlxdOrd- with GPU ${near.slice(0, 2).join(', ')}${near.length > 2 ? ` +${near.length - 2}` : ''} under the same switch`, 'on', actual);
      return f('ro-ok', 'pass', bdf, `${n.name}: DevCtl RlxdOrd${on ? '+' : '-'}${on ? '' : ' (no GPU under the same switch)'}`, on ? 'on' : 'on where a GPU is near', actual);
    });
  },
});
