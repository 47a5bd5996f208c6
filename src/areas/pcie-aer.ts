// PCIe errors (pcie-aer): the kernel's aer_* counters and the AER status registers, read by the shared inventory pass.
// A drill records one error where the node records it.
import { enablesText } from '../checks/aer-judge.js';
import { aer } from '../compare/aer.js';
import { valueOf } from '../model/fact.js';
import { parsePciConfig } from '../parsers/pci-config.js';
import { base, capOf, devOf, patch32, text } from './stage.js';
import { defineArea } from './types.js';

/** fatal / nonfatal: one uncorrectable error since boot; cor: `n` more correctable errors than the node counts. */
export type AerFault = { readonly kind: 'pcie-aer'; readonly bdf: string; readonly error: 'fatal' | 'nonfatal' | 'cor'; readonly n: number };

/** Malformed TLP (fatal by the spec's default severity), Completion Timeout (non-fatal), Bad TLP (correctable). */
const AER_BIT = { fatal: 18, nonfatal: 14, cor: 6 } as const;
const AER_FILE = { fatal: 'aer_dev_fatal', nonfatal: 'aer_dev_nonfatal', cor: 'aer_dev_correctable' } as const;

/**
 * The sticky status bit in the AER capability (UESta with its severity set or cleared; CESta), so a device without
 * counters (a VM) shows it too; and the kernel's counter file, when there is one: the bit's line and TOTAL_ERR_* raised by `n`.
 */
function rewrite(f: AerFault, p: string, b: Uint8Array): Uint8Array {
  if (devOf(p) !== f.bdf) return b;
  const bit = 1 << AER_BIT[f.error];
  if (base(p) === 'config') {
    const at = valueOf(parsePciConfig(b).aer)?.offset;
    if (at === undefined) return b;
    if (f.error === 'cor') return patch32(b, at + 0x10, bit);
    const severed = patch32(b, at + 0x0c, f.error === 'fatal' ? bit : 0, f.error === 'fatal' ? 0 : bit);
    return patch32(patch32(severed, at + 0x08, 0, bit), at + 0x04, bit);
  }
  if (base(p) !== AER_FILE[f.error]) return b;
  const bump = (l: string): string => l.replace(/(\d+)$/, (d) => String(Number(d) + f.n));
  // The bit's line is the one naming it in either kernel's wording; the total line always.
  const names = { fatal: /^(MalfTLP|Malformed TLP) /, nonfatal: /^(CmpltTO|Completion Timeout) /, cor: /^(BadTLP|Bad TLP) / }[f.error];
  return Buffer.from(text(b).split('\n').map((l) => (names.test(l) || l.startsWith('TOTAL_ERR_') ? bump(l) : l)).join('\n'));
}

export default defineArea<'pcie-aer', AerFault>({
  id: 'pcie-aer',
  title: 'PCIe errors the kernel counts (aer_dev_*) and the AER status registers',
  compare: aer,
  // Which errors the device reports, and whether the kernel counts them at all.
  captureDevice(_inv, d) {
    const pcie = capOf(d, 'pcie');
    return { ...(pcie ? { errorReporting: enablesText(pcie.devCtl) } : {}), ...(d.aer.correctable.state !== 'unknown' ? { aerCounters: d.aer.correctable.state === 'present' } : {}) };
  },
  fault: {
    syntax: 'pcie-aer:<bdf>=fatal|nonfatal|cor+N',
    subject: 'a PCI address on a GPU↔NIC path (0000:18:00.0)',
    parse(bdf, value) {
      if (value === 'fatal' || value === 'nonfatal') return { ok: true, value: { kind: 'pcie-aer', bdf, error: value, n: 1 } };
      const c = /^cor\+([1-9]\d{0,8})$/.exec(value);
      if (!c) return { ok: false, error: 'value must be fatal, nonfatal or cor+N (N correctable errors more, 1 to 999999999)' };
      return { ok: true, value: { kind: 'pcie-aer', bdf, error: 'cor', n: Number(c[1]) } };
    },
    format: (f) => `pcie-aer:${f.bdf}=${f.error === 'cor' ? `cor+${f.n}` : f.error}`,
    stage: { rewrite },
  },
});
