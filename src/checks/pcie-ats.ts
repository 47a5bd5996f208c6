// pcie-ats: ATS state of each GPU and NIC; on a virtualized class, enabled wherever the reference node had it.
import { ABSENT, within } from '../model/fact.js';
import { type Check, type Codes, defineCheck, finder } from './types.js';

/** Every code this check makes: what it tells, what to do, the layer that owns it (the field matrix). */
const CODES = {
  'ats-unreadable': { tells: 'ATS could not be read: it is in extended config space, which only root can read, or the capability list broke before it (the message names the problem).', do: 'Run the gate as root (Slurm Prolog does).', layer: 'scheduler' },
  'ats-na': { tells: 'No GPU or RDMA adapter to check ATS on.', do: 'None.', layer: 'server' },
  'ats-ok': { tells: 'Address Translation Services enabled as expected.', do: 'None.', layer: 'server' },
  'ats-off': { tells: 'ATS is off on a device where the virtualized design relies on it, so peer traffic is translated by the IOMMU on every access.', do: 'Enable ATS in the hypervisor/device assignment and the adapter firmware (ATS_ENABLED) as the reference node has it.', layer: 'server' },
} as const satisfies Codes;

const f = finder('pcie-ats', CODES);

const check: Check<'pcie-ats', typeof CODES> = defineCheck({
  id: 'pcie-ats',
  title: 'ATS on GPUs and NICs (enforced on virtualized classes)',
  reasonLabel: 'pcie-ats',
  codes: CODES,
  docs: 'docs/checks/pcie-ats.md',
  run({ inv, baseline }) {
    const enforce = baseline?.platform === 'virtualized';
    const subjects = [...inv.gpus.map((g) => g.bdf), ...inv.nics.flatMap((n) => (n.bdf.state === 'present' ? [n.bdf.value] : []))];
    if (subjects.length === 0) return [f('ats-na', 'skip', 'node', 'not applicable: no GPU or RDMA adapter on the PCI bus')];
    return subjects.map((bdf) => {
      const ats = within(inv.pci.get(bdf)?.config ?? ABSENT, (c) => c.ats, 'config space absent');
      if (ats.state === 'unknown') return f('ats-unreadable', 'skip', bdf, `ATS not readable (${ats.why})`);
      const on = ats.state === 'present' && ats.value.enabled;
      const got = ats.state === 'present' ? (on ? `enabled (STU ${ats.value.stu})` : 'disabled') : 'no ATS capability';
      const want = enforce ? baseline?.devices.find((d) => d.bdf === bdf)?.ats : undefined;
      if (want && !on) return f('ats-off', 'fail', bdf, `ATS ${got}`, 'enabled', got);
      return f('ats-ok', 'pass', bdf, `ATS ${got}`, want ? 'enabled' : 'not required', got);
    });
  },
});

export default check;
