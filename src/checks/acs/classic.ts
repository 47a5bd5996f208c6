// pcie-acs, classic platform (HGX H100/H200 generation and older): no ReqRedir, CmpltRedir or EgressCtrl on a bridge
// a GPU↔NIC peer transfer crosses; a virtualized class keeps the kernel's isolation set there instead.
import { ABSENT, within } from '../../model/fact.js';
import type { BaselineClass } from '../../model/baseline.js';
import type { Bdf, Inventory } from '../../model/inventory.js';
import { formatAcs, redirectBits } from '../../parsers/pci-config.js';
import { acsFix, acsNotApplicable, acsWord, bits7, MASK, maskDiff, meets, withinCap } from '../../pcie/acs-mask.js';
import { topoMatrix } from '../../topo/matrix.js';
import { type AcsFinding, f } from './codes.js';

/** Bridges on a GPU↔NIC peer path, each with the pairs that cross it. */
export function peerBridges(inv: Inventory): Map<Bdf, string[]> {
  const m = topoMatrix(inv);
  const bridges = new Map<Bdf, string[]>();
  for (const g of m.gpus)
    for (const n of m.nics)
      for (const b of m.path(g.label, n.label)?.peerBridges ?? []) bridges.set(b, [...(bridges.get(b) ?? []), `${g.label}-${n.name}`]);
  return bridges;
}

export function classicFindings(inv: Inventory, baseline: BaselineClass | null, policy: 'classic' | 'virtualized', note: string | null): AcsFinding[] {
  const bridges = peerBridges(inv);
  const tail = note ? `; ${note}` : '';
  if (bridges.size === 0) {
    const m = topoMatrix(inv);
    const why = m.nics.length === 0 ? 'no RDMA adapter' : m.gpus.length === 0 ? 'no GPU' : 'no GPU↔NIC pair shares a PCIe switch';
    return [f('acs-na', 'skip', 'node', `not applicable: ${why}, so no bridge lies between a GPU and a NIC${tail}`)];
  }
  const allowed = baseline?.acsRedirectAllowed ?? false;
  const out: AcsFinding[] = [];
  for (const [bdf, pairs] of [...bridges].sort()) {
    const acs = within(inv.pci.get(bdf)?.config ?? ABSENT, (c) => c.acs, 'config space absent');
    const via = `on the path of ${pairs.slice(0, 3).join(', ')}${pairs.length > 3 ? ` +${pairs.length - 3} more` : ''}${tail}`;
    // Unknown (not root, or a capability list that broke before its end) is never "no ACS": skip with the reason.
    if (acs.state === 'unknown') {
      out.push(f('acs-unreadable', 'skip', bdf, `ACS control not readable (${acs.why})`));
      continue;
    }
    if (policy === 'virtualized') {
      const cfg = inv.pci.get(bdf)?.config;
      const na = cfg?.state === 'present' ? acsNotApplicable(cfg.value.pcie, cfg.value.multiFunction) : null;
      if (na !== null) {
        out.push(f('acs-mask-ok', 'pass', bdf, `${na} ${via}`, MASK.isolated.text, 'not applicable'));
        continue;
      }
      const word = acs.state === 'present' ? acsWord(acs.value.ctl) : null;
      // The kernel's isolation is what the port implements of it (pci_acs_flags_enabled): a control it lacks is no want.
      const need = acs.state === 'present' ? withinCap(MASK.isolated, acs.value.cap) : MASK.isolated;
      if (word !== null && meets(word, need)) out.push(f('acs-mask-ok', 'pass', bdf, `ACSCtl ${bits7(word)} keeps isolation ${via}`, need.text, bits7(word)));
      else out.push(f('acs-mask', 'fail', bdf, word === null ? `no ACS capability: no isolation ${via}` : `ACSCtl ${bits7(word)} ${via}, required ${need.text} (${maskDiff(word, need)}); fix: ${acsFix(bdf, need)}`, need.text, word === null ? 'no ACS' : bits7(word)));
      continue;
    }
    if (acs.state === 'absent') {
      out.push(f('acs-ok', 'pass', bdf, `no ACS capability ${via}`, 'no redirect', 'no ACS'));
      continue;
    }
    // ACS Control as it reads, not masked by ACS Capability: the kernel's P2P DMA path (p2pdma.c,
    // pci_bridge_has_acs_redir) and rdma_topo judge the raw register, so a set bit the port says it lacks still counts.
    const set = redirectBits(acs.value.ctl);
    const ctl = formatAcs(acs.value.ctl);
    const word = acsWord(acs.value.ctl);
    if (set.length && !allowed) out.push(f('acs-redirect', 'fail', bdf, `ACS ${set.join('+')} set ${via}; fix: ${acsFix(bdf, MASK.noRedirect)}`, 'no redirect', set.join('+')));
    else out.push(f('acs-ok', 'pass', bdf, `ACSCtl ${ctl} ${via}`, allowed ? 'redirect allowed' : 'no redirect', set.length ? set.join('+') : 'no redirect'));
  }
  return out;
}
