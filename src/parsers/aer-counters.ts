// The kernel's AER statistics files (drivers/pci/pcie/aer.c, aer_stats_dev_attr / aer_stats_rootport_attr):
// `aer_dev_{correctable,nonfatal,fatal}` print one "%s %llu\n" line per named status bit, then
// "TOTAL_ERR_COR|NONFATAL|FATAL %llu\n"; `aer_rootport_total_err_*` print one "%llu\n". The bit labels changed
// between kernels (4.19: "Receiver Error", "Bad TLP", "RELAY_NUM Rollover"; 5.x on: "RxErr", "BadTLP", "Rollover"),
// so a line is read as "label, trailing integer", never against a list of names. Anything else is an error, never 0.
import type { AerCounterFile } from '../model/aer.js';
import type { Parsed } from './sysfs.js';

export type AerKind = 'correctable' | 'nonfatal' | 'fatal';
/** The total line's label per file (aer.c: aer_stats_dev_attr(..., "ERR_COR") with "TOTAL_" prefixed). */
export const TOTAL_LABEL: Readonly<Record<AerKind, string>> = { correctable: 'TOTAL_ERR_COR', nonfatal: 'TOTAL_ERR_NONFATAL', fatal: 'TOTAL_ERR_FATAL' };

/** A label as the kernel prints one: printable ASCII, starting with a non-space, at most 64 characters. */
const MAX_LABEL = 64;
const MAX_DIGITS = 20;

/**
 * One "label count" line, scanned from its end: the trailing digits (1-20), the spaces and tabs before them (at
 * least one), and the label before those (1-64 printable ASCII characters, the first not a space; it cannot end in
 * a space or tab, those belong to the separator). The language of /^([\x21-\x7e][\x20-\x7e]{0,63}?)[ \t]+(\d{1,20})$/
 * with the same captures, without a regular expression that backtracks on every line. null: not such a line.
 */
export function splitAerLine(line: string): { readonly label: string; readonly digits: string } | null {
  let d = line.length;
  while (d > 0 && isDigit(line.charCodeAt(d - 1))) d--;
  const digits = line.length - d;
  if (digits < 1 || digits > MAX_DIGITS) return null;
  let w = d;
  while (w > 0 && isBlank(line.charCodeAt(w - 1))) w--;
  if (w === d || w < 1 || w > MAX_LABEL) return null;
  const first = line.charCodeAt(0);
  if (first < 0x21 || first > 0x7e) return null;
  for (let i = 1; i < w; i++) {
    const c = line.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return null;
  }
  return { label: line.slice(0, w), digits: line.slice(d) };
}
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isBlank = (c: number): boolean => c === 0x20 || c === 0x09;
/** The files hold at most 32 bit lines and the total; a longer file is not one of them. */
const MAX_LINES = 40;
const show = (s: string): string => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);

function count(digits: string, what: string): Parsed<number> {
  const n = Number(digits);
  // u64 in the kernel; past 2^53 it cannot be held exactly, and no real counter gets there: refused, not rounded.
  return Number.isSafeInteger(n) ? { ok: true, value: n } : { ok: false, error: `${what}: ${digits} is beyond an exact count` };
}

/** One `aer_dev_*` file. The total line must be there (every kernel since 4.19 prints it) and come last. */
export function parseAerCounterFile(text: string, kind: AerKind): Parsed<AerCounterFile> {
  const want = TOTAL_LABEL[kind];
  const lines = text.replace(/\n$/, '').split('\n');
  if (text.trim() === '') return { ok: false, error: `empty (no ${want} line)` };
  if (lines.length > MAX_LINES) return { ok: false, error: `${lines.length} lines: not an AER statistics file` };
  const bits: { label: string; count: number }[] = [];
  let total: number | null = null;
  for (const [i, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, '');
    const m = splitAerLine(line);
    if (!m) return { ok: false, error: `line ${i + 1} is not "label count": ${show(line)}` };
    const label = m.label;
    const n = count(m.digits, label);
    if (!n.ok) return n;
    if (total !== null) return { ok: false, error: `line ${i + 1} follows ${want}: ${show(line)}` };
    if (label.startsWith('TOTAL_ERR_')) {
      if (label !== want) return { ok: false, error: `${label} in the ${kind} file (want ${want})` };
      total = n.value;
    } else bits.push({ label, count: n.value });
  }
  if (total === null) return { ok: false, error: `no ${want} line` };
  return { ok: true, value: { bits, total } };
}

/** One `aer_rootport_total_err_*` file: a single count. */
export function parseAerTotal(text: string): Parsed<number> {
  const s = text.replace(/\n$/, '');
  if (!/^\d{1,20}$/.test(s)) return { ok: false, error: `not a count: ${show(s)}` };
  return count(s, 'total');
}

/** The bits with a non-zero count, for a message: "BadTLP 3, RxErr 1". */
export function nonZero(f: AerCounterFile): string {
  return f.bits.filter((b) => b.count > 0).map((b) => `${b.label} ${b.count}`).join(', ');
}
