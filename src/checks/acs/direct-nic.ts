// pcie-acs on a Direct NIC platform: every port the platform rules holds its mask (pcie/acs-platform.ts).
import { ABSENT, within } from '../../model/fact.js';
import type { Inventory } from '../../model/inventory.js';
import { acsFix, acsWord, bits7, maskDiff, meets } from '../../pcie/acs-mask.js';
import type { PortRule } from '../../pcie/acs-platform.js';
import { type AcsFinding, f } from './codes.js';

export function maskFindings(inv: Inventory, rules: ReadonlyMap<string, PortRule>, label: string): AcsFinding[] {
  return [...rules.values()].sort((a, b) => (a.bdf < b.bdf ? -1 : 1)).map(({ bdf, mask, role }) => {
    const acs = within(inv.pci.get(bdf)?.config ?? ABSENT, (c) => c.acs, 'config space absent');
    if (acs.state === 'unknown') return f('acs-unreadable', 'skip', bdf, `ACS control not readable (${acs.why}); ${role}`);
    if (acs.state === 'absent') {
      return mask.set === 0
        ? f('acs-mask-ok', 'pass', bdf, `no ACS capability, nothing required set (${label}): ${role}`, mask.text, 'no ACS')
        : f('acs-mask', 'fail', bdf, `no ACS capability where ${label} requires ${mask.text}: ${role}`, mask.text, 'no ACS');
    }
    const word = acsWord(acs.value.ctl);
    const hex = `0x${word.toString(16).padStart(4, '0')}`;
    if (meets(word, mask)) return f('acs-mask-ok', 'pass', bdf, `ACSCtl ${bits7(word)} (${hex}) meets ${mask.text} (${label}): ${role}`, mask.text, bits7(word));
    return f('acs-mask', 'fail', bdf, `ACSCtl ${bits7(word)} (${hex}), ${label} requires ${mask.text}: want ${maskDiff(word, mask)}; ${role}; fix: ${acsFix(bdf, mask)}`, mask.text, bits7(word));
  });
}
