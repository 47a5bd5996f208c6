// pcie-acs: no ACS redirect (ReqRedir, CmpltRedir, EgressCtrl) on a bridge a GPU↔NIC peer transfer crosses.
import { ABSENT, within } from '../model/fact.js';
import type { Bdf } from '../model/inventory.js';
import { formatAcs, redirectBits } from '../parsers/pci-config.js';
import { topoMatrix } from '../topo/matrix.js';
import { type Check, type Codes, defineCheck, finder } from './types.js';

/** Every code this check makes: what it tells, what to do, the layer that owns it (the field matrix). */
const CODES = {
  'acs-ok': { tells: 'No ACS redirect on the bridges between GPU and NIC: peer traffic can stay inside the switch.', do: 'None.', layer: 'server' },
  'acs-redirect': { tells: 'ACS redirect on a bridge between a GPU and a NIC sends every GPUDirect transfer up through the CPU root complex.', do: 'Disable ReqRedir/CmpltRedir/EgressCtrl on the switch ports (BIOS ACS option or setpci at boot) on bare metal; keep only where the platform needs isolation.', layer: 'server' },
  'acs-unreadable': { tells: 'ACS control could not be read: it is in extended config space, which only root can read, or the capability list broke before it (the message names the problem).', do: 'Run the gate as root (Slurm Prolog does).', layer: 'scheduler' },
  'acs-na': { tells: 'No bridge lies between a GPU and an RDMA adapter on this node.', do: 'None.', layer: 'server' },
} as const satisfies Codes;

const f = finder('pcie-acs', CODES);

const check: Check<'pcie-acs', typeof CODES> = defineCheck({
  id: 'pcie-acs',
  title: 'ACS redirect between GPUs and RDMA adapters',
  reasonLabel: 'pcie-acs',
  codes: CODES,
  docs: 'docs/checks/pcie-acs.md',
  run({ inv, baseline }) {
    const m = topoMatrix(inv);
    const bridges = new Map<Bdf, string[]>();
    for (const g of m.gpus)
      for (const n of m.nics)
        for (const b of m.path(g.label, n.label)?.peerBridges ?? []) bridges.set(b, [...(bridges.get(b) ?? []), `${g.label}-${n.name}`]);
    if (bridges.size === 0) {
      const why = m.nics.length === 0 ? 'no RDMA adapter' : m.gpus.length === 0 ? 'no GPU' : 'no GPU↔NIC pair shares a PCIe switch';
      return [f('acs-na', 'skip', 'node', `not applicable: ${why}, so no bridge lies between a GPU and a NIC`)];
    }
    const allowed = baseline?.acsRedirectAllowed ?? false;
    const out = [];
    for (const [bdf, pairs] of [...bridges].sort()) {
      const acs = within(inv.pci.get(bdf)?.config ?? ABSENT, (c) => c.acs, 'config space absent');
      const via = `on the path of ${pairs.slice(0, 3).join(', ')}${pairs.length > 3 ? ` +${pairs.length - 3}` : ''}`;
      // Unknown (not root, or a capability list that broke before its end) is never "no ACS": skip with the reason.
      if (acs.state === 'unknown') {
        out.push(f('acs-unreadable', 'skip', bdf, `ACS control not readable (${acs.why})`));
        continue;
      }
      if (acs.state === 'absent') {
        out.push(f('acs-ok', 'pass', bdf, `no ACS capability ${via}`, 'no redirect', 'no ACS'));
        continue;
      }
      const set = redirectBits(acs.value.ctl);
      const ctl = formatAcs(acs.value.ctl);
      if (set.length && !allowed) out.push(f('acs-redirect', 'fail', bdf, `ACS ${set.join('+')} set ${via}`, 'no redirect', set.join('+')));
      else out.push(f('acs-ok', 'pass', bdf, `ACSCtl ${ctl} ${via}`, allowed ? 'redirect allowed' : 'no redirect', set.length ? set.join('+') : 'no redirect'));
    }
    return out;
  },
});

export default check;
