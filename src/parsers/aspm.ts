// ASPM as the kernel shows it (drivers/pci/pcie/aspm.c): the policy parameter, the per-device `link/` attributes,
// and Link Control's ASPM Control field as lspci names it. Pure.
import type { Parsed } from './sysfs.js';

/** An ASPM policy file: every policy the kernel knows, the active one in brackets. */
export interface AspmPolicy {
  readonly active: string;
  readonly choices: readonly string[];
}

/** The `link/` attributes of a device whose upstream link the kernel manages (aspm_ctrl_attrs, minus LTR). */
export const LINK_ASPM_FILES = ['clkpm', 'l0s_aspm', 'l1_aspm', 'l1_1_aspm', 'l1_2_aspm'] as const;
export type LinkAspmFile = (typeof LINK_ASPM_FILES)[number];

/**
 * `/sys/module/pcie_aspm/parameters/policy` (pcie_aspm_get_policy): each of policy_str followed by a space, the
 * active one as `[name]`, then a newline: `[default] performance powersave powersupersave \n` (older kernels
 * have no powersupersave). Anything but lower-case words with exactly one bracketed is not that file.
 */
export function parseAspmPolicy(text: string): Parsed<AspmPolicy> {
  const words = text.trim().split(/ +/);
  const bad = (why: string): Parsed<AspmPolicy> => ({ ok: false, error: `not an ASPM policy line (${why}): ${JSON.stringify(text.slice(0, 60))}` });
  if (text.length > 256) return bad('too long');
  const names = words.map((w) => /^\[([a-z]+)\]$/.exec(w)?.[1] ?? w);
  if (!names.every((n) => /^[a-z]{2,32}$/.test(n))) return bad('a word that is not a policy name');
  const active = words.filter((w) => w.startsWith('['));
  if (active.length !== 1) return bad(`${active.length} policies in brackets`);
  if (new Set(names).size !== names.length) return bad('a policy listed twice');
  return { ok: true, value: { active: active[0]!.slice(1, -1), choices: names } };
}

/** One `link/*_aspm` or `link/clkpm` attribute: sysfs_emit("%d\n") of a 0/1 state. */
export function parseAspmFlag(text: string): Parsed<boolean> {
  const t = text.trim();
  return t === '0' || t === '1' ? { ok: true, value: t === '1' } : { ok: false, error: `not an ASPM state (0 or 1): ${JSON.stringify(text.slice(0, 20))}` };
}

/** Link Control ASPM Control (bits 1:0) as lspci prints it after `LnkCtl: ASPM` (pciutils ls-caps.c aspm_enabled). */
export function aspmCtlText(bits: number): string {
  return ['Disabled', 'L0s Enabled', 'L1 Enabled', 'L0s L1 Enabled'][bits & 3]!;
}
