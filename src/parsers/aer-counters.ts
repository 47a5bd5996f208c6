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

/**
 * A "label count" line: the label printable ASCII, 1-64 characters, first and last not a space (a space or tab
 * before the count belongs to the separator), then spaces or tabs, then 1-20 digits. A line splits one way only (the
 * count is the trailing digits, the separator the blanks before them), so the label is written greedy: the former
 * lazy `[\x20-\x7e]{0,63}?` accepted the same lines with the same captures (held by a differential test).
 */
const LINE = /^([\x21-\x7e](?:[\x20-\x7e]{0,62}[\x21-\x7e])?)[ \t]+(\d{1,20})$/;
/**
 * The same line, taken from a whole file in place (sticky), with its `\r` and `\n`: the common case (a well-formed
 * file) is read without splitting it into lines, one native match per line. Anything unusual goes to the line by line
 * reading, which alone words the errors.
 */
const NEXT_LINE = /([\x21-\x7e](?:[\x20-\x7e]{0,62}[\x21-\x7e])?)[ \t]+(\d{1,20})\r?(?:\n|$)/y;
/** The files hold at most 32 bit lines and the total; a longer file is not one of them. */
const MAX_LINES = 40;
const show = (s: string): string => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);

function count(digits: string, what: string): Parsed<number> {
  const n = Number(digits);
  // u64 in the kernel; past 2^53 it cannot be held exactly, and no real counter gets there: refused, not rounded.
  return Number.isSafeInteger(n) ? { ok: true, value: n } : { ok: false, error: `${what}: ${digits} is beyond an exact count` };
}

/**
 * A well-formed file read in place: null when anything is unusual (an empty file, too many lines, a line that is not
 * "label count", a count beyond an exact one, a misplaced or foreign total), for byLines to say what.
 */
function wellFormed(text: string, kind: AerKind): AerCounterFile | null {
  const want = TOTAL_LABEL[kind];
  const bits: { label: string; count: number }[] = [];
  let total: number | null = null;
  NEXT_LINE.lastIndex = 0;
  for (let lines = 1; NEXT_LINE.lastIndex < text.length; lines++) {
    const m = NEXT_LINE.exec(text);
    if (m === null || lines > MAX_LINES || total !== null) return null;
    const label = m[1]!;
    const n = Number(m[2]);
    if (!Number.isSafeInteger(n)) return null;
    if (label.startsWith('TOTAL_ERR_')) {
      if (label !== want) return null;
      total = n;
    } else bits.push({ label, count: n });
  }
  return total === null ? null : { bits, total };
}

/**
 * One `aer_dev_*` file. The total line must be there (every kernel since 4.19 prints it) and come last. No bit may
 * count more than the total: pci_dev_aer_stats_incr adds 1 to the total for every error and 1 to each status bit the
 * error had, so "DLP 3" under "TOTAL_ERR_FATAL 0" is no file the kernel writes (torn, foreign), never "no error".
 */
export function parseAerCounterFile(text: string, kind: AerKind): Parsed<AerCounterFile> {
  const v = wellFormed(text, kind);
  const p = v !== null ? { ok: true as const, value: v } : byLines(text, kind);
  return p.ok ? withinTotal(p.value) : p;
}

/** The file, or an error when a bit counts more errors than the total (see parseAerCounterFile). */
export function withinTotal(f: AerCounterFile): Parsed<AerCounterFile> {
  const over = f.bits.find((b) => b.count > f.total);
  return over ? { ok: false, error: `${over.label} ${over.count} is more than the total ${f.total}: not a count the kernel keeps` } : { ok: true, value: f };
}

/** Line by line, naming the first thing wrong. */
function byLines(text: string, kind: AerKind): Parsed<AerCounterFile> {
  const want = TOTAL_LABEL[kind];
  const lines = text.replace(/\n$/, '').split('\n');
  if (text.trim() === '') return { ok: false, error: `empty (no ${want} line)` };
  if (lines.length > MAX_LINES) return { ok: false, error: `${lines.length} lines: not an AER statistics file` };
  const bits: { label: string; count: number }[] = [];
  let total: number | null = null;
  for (const [i, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, '');
    const m = LINE.exec(line);
    if (!m) return { ok: false, error: `line ${i + 1} is not "label count": ${show(line)}` };
    const label = m[1]!;
    const n = count(m[2]!, label);
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
