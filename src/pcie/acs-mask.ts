// ACS control masks as the kernel's `pci=config_acs=` writes them (Documentation/admin-guide/kernel-parameters.txt):
// seven characters for ACS Control bits 6..0 (PCIe Base 6.3 §7.7.8.3), '1' set, '0' clear, 'x' left as it is.
import type { AcsBits } from '../model/pci.js';

/** Bit order of ACS Control, bit 0 first (SrcValid … DirectTrans). */
const BITS = ['srcValid', 'transBlk', 'reqRedir', 'cmpltRedir', 'upstreamFwd', 'egressCtrl', 'directTrans'] as const satisfies readonly (keyof AcsBits)[];
const NAMES = ['SrcValid', 'TransBlk', 'ReqRedir', 'CmpltRedir', 'UpstreamFwd', 'EgressCtrl', 'DirectTrans'] as const;

export interface AcsMask {
  /** The mask as text, bit 6 first ("xx101x1"). */
  readonly text: string;
  /** Bits that must be set, bits that must be clear. */
  readonly set: number;
  readonly clear: number;
}

export function acsMask(text: string): AcsMask {
  if (!/^[01x]{7}$/.test(text)) throw new Error(`not an ACS mask: ${text}`);
  let set = 0;
  let clear = 0;
  [...text].reverse().forEach((c, bit) => {
    if (c === '1') set |= 1 << bit;
    if (c === '0') clear |= 1 << bit;
  });
  return { text, set, clear };
}

/** The masks the platforms use (named for what they keep). */
export const MASK = {
  /** The kernel's own isolation set: SrcValid, ReqRedir, CmpltRedir, UpstreamFwd (pci_std_enable_acs()). */
  isolated: acsMask('xx111x1'),
  /** A Vera root port: CmpltRedir is read-only and off there, so it is not asked for. */
  isolatedVera: acsMask('xx101x1'),
  /** No ACS bit that matters to peer traffic (bare-metal inline ConnectX complex). */
  off: acsMask('xx000x0'),
  /** The classic bare-metal rule: no ReqRedir, CmpltRedir or EgressCtrl; the others as they are. */
  noRedirect: acsMask('x0x00xx'),
} as const;

/**
 * The mask a port can hold: each bit it wants set that the port's ACS Capability lacks left as it is ('x'). The kernel
 * sets only the controls a port implements (drivers/pci/pci.c pci_std_enable_acs) and takes a missing one as hard-wired
 * enabled (pci_acs_flags_enabled), while its Control bit reads 0: wanting it set is a fail no setpci can mend.
 */
export function withinCap(m: AcsMask, cap: AcsBits): AcsMask {
  const has = acsWord(cap);
  return acsMask(NAMES.map((_, i) => 6 - i).map((bit) => ((m.set >> bit) & 1 ? ((has >> bit) & 1 ? '1' : 'x') : (m.clear >> bit) & 1 ? '0' : 'x')).join(''));
}

/** The ACS Control word (bits 6..0) from its decoded fields. */
export function acsWord(b: AcsBits): number {
  return BITS.reduce((w, k, i) => (b[k] ? w | (1 << i) : w), 0);
}

/** The word with the mask applied: what the port would hold once fixed. */
export const applyMask = (word: number, m: AcsMask): number => (word | m.set) & ~m.clear & 0xffff;
export const meets = (word: number, m: AcsMask): boolean => applyMask(word, m) === word;

/** Seven bits, bit 6 first, as the mask is written ("0011101"). */
export const bits7 = (word: number): string => (word & 0x7f).toString(2).padStart(7, '0');

/** What differs, by name: "ReqRedir+ CmpltRedir-" (the sign is what the mask wants). */
export function maskDiff(word: number, m: AcsMask): string {
  const want = applyMask(word, m);
  return NAMES.filter((_, i) => ((word ^ want) >> i) & 1).map((n) => `${n}${(want >> NAMES.indexOf(n)) & 1 ? '+' : '-'}`).join(' ');
}

/**
 * What a human applies, never gdrgate: `setpci` for this boot (ACS Control is at +6 of the ACS extended capability)
 * and the kernel parameter (Linux 6.11 and later) that sets it at every boot, each writing the mask's bits alone:
 * setpci's VALUE:MASK form changes only the bits in MASK, as config_acs's 'x' leaves a bit as it is, so ACS Control's
 * other bits (I/O Request Blocking, Unclaimed Request Redirect, bits 7 to 15, which gdrgate does not decode) stay.
 */
export function acsFix(bdf: string, m: AcsMask): string {
  const hex = (n: number): string => n.toString(16).padStart(4, '0');
  return `setpci -s ${bdf} ECAP_ACS+0x6.w=${hex(m.set)}:${hex(m.set | m.clear)} (this boot); pci=config_acs=${m.text}@${bdf} on the kernel command line (Linux 6.11+, every boot)`;
}

/** PCIe Device/Port Types whose ACS applies only in a multi-function device (PCIe Base 6.3 §6.12.1.2). */
const MULTIFUNCTION_ONLY: Readonly<Record<number, string>> = { 0: 'endpoint', 1: 'legacy endpoint', 5: 'switch upstream port', 9: 'root complex integrated endpoint' };

/**
 * Why a function's ACS controls bear on no isolation, as the kernel decides it (drivers/pci/pci.c pci_acs_enabled):
 * ACS applies to a switch upstream port or an endpoint only in a multi-function device; a single-function one is
 * taken as isolated whatever its controls. Null: they apply (downstream and root ports always), or its PCI Express
 * capability could not be read.
 */
export function acsNotApplicable(pcie: { readonly state: string; readonly value?: { readonly portType: number } }, multiFunction: boolean): string | null {
  const kind = pcie.state === 'present' && pcie.value ? MULTIFUNCTION_ONLY[pcie.value.portType] : undefined;
  return kind !== undefined && !multiFunction ? `a single-function ${kind}: ACS does not apply to it, and the kernel takes it as isolated (pci_acs_enabled)` : null;
}
