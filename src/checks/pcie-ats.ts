// pcie-ats: ATS state of each GPU and NIC; on a virtualized class, enabled wherever the reference node had it.
import { ABSENT, within } from '../model/fact.js';
import type { Finding } from '../model/finding.js';
import { defineCheck, finder } from './types.js';
import WORDING from './pcie-ats.json' with { type: 'json' };

const f = finder('pcie-ats', WORDING.codes);

export default defineCheck('pcie-ats', WORDING, {
  run({ inv, baseline }): Finding[] {
    const enforce = baseline?.platform === 'virtualized';
    const subjects = [...inv.gpus.map((g) => g.bdf), ...inv.nics.flatMap((n) => (n.bdf.state === 'present' ? [n.bdf.value] : []))];
    if (subjects.length === 0) return [f('ats-na', 'skip', 'node', 'not applicable: no GPU or RDMA adapter on the PCI bus')];
    return subjects.map((bdf) => {
      const ats = within(inv.pci.get(bdf)?.config ?? ABSENT, (c) => c.ats, 'config space absent');
      if (ats.state === 'unknown') return f('ats-unreadable', 'skip', bdf, `ATS not readable (${ats.why})`);
      const on = ats.state === 'present' && ats.value.enabled;
      const got = ats.state === 'present' ? (on ? `enabled (STU ${ats.value.stu})` : 'disabled') : 'no ATS capability';
      const said = ats.state === 'present' ? `ATS ${got}` : got;
      const want = enforce ? baseline?.devices.find((d) => d.bdf === bdf)?.ats : undefined;
      if (want && !on) return f('ats-off', 'fail', bdf, said, 'enabled', got);
      return f('ats-ok', 'pass', bdf, said, want ? 'enabled' : 'not required', got);
    });
  },
});
