// sysfs `resourceN_resize` (drivers/pci/pci-sysfs.c __resource_resize_show): the sizes BAR N can take, as the kernel
// prints pci_rebar_get_possible_sizes(): "%016llx\n", bit n set when the BAR can be 2^n MiB (bit 0 = 1 MiB; PCIe Base
// 6.3 §7.8.6 Resizable BAR Capability). The attribute is there only for a BAR the capability lists.
import type { Parsed } from '../../parsers/sysfs.js';

/** One resizable BAR: its index and the sizes it can take, as powers of two of MiB, smallest first. */
export interface RebarBar {
  readonly bar: number;
  readonly sizes: readonly number[];
}

export const RESIZE_RE = /^resource([0-5])_resize$/;

export function parseResizeMask(text: string): Parsed<readonly number[]> {
  const t = text.trim();
  if (!/^[0-9a-f]{16}$/.test(t)) return { ok: false, error: `not a resize mask (16 hex digits): ${JSON.stringify(t.slice(0, 24))}` };
  const mask = BigInt(`0x${t}`);
  const sizes: number[] = [];
  for (let n = 0; n < 64; n++) if ((mask >> BigInt(n)) & 1n) sizes.push(n);
  return { ok: true, value: sizes };
}

/** The mask back as the kernel prints it (the drill's staging writes it). */
export function formatResizeMask(sizes: readonly number[]): string {
  const mask = sizes.reduce((m, n) => m | (1n << BigInt(n)), 0n);
  return `${mask.toString(16).padStart(16, '0')}\n`;
}

/** 2^n MiB in bytes. */
export const sizeBytes = (n: number): bigint => 1n << BigInt(20 + n);
