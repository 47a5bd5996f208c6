// pcie-ats: on a virtualized class, ATS is enabled on each GPU and NIC that had it on the reference node.
import { defineCheck, finder } from './types.js';

const f = finder('pcie-ats');

export default defineCheck({
  id: 'pcie-ats',
  title: 'ATS on GPUs and NICs (virtualized classes)',
  run({ inv, baseline }) {
    if (!baseline || baseline.platform !== 'virtualized') return [];
    const want = baseline.devices.filter((d) => d.role !== 'bridge' && d.ats !== undefined);
    return want.map((d) => {
      const c = inv.pci.get(d.bdf)?.config;
      if (!c?.known || !c.value.extReadable) return f('ats-ok', 'skip', d.bdf, 'ATS not readable (extended config space needs root)');
      const on = c.value.ats?.enabled ?? false;
      const got = c.value.ats ? (on ? 'enabled' : 'disabled') : 'no ATS capability';
      const exp = d.ats ? 'enabled' : 'not required';
      if (d.ats && !on) return f('ats-off', 'fail', d.bdf, `ATS ${got}`, exp, got);
      return f('ats-ok', 'pass', d.bdf, `ATS ${got}`, exp, got);
    });
  },
});
