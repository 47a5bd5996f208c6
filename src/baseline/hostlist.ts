// Slurm hostlist brackets (`gpu[001-064,100]`) as digit automata for the matcher: the numbers a bracket allows
// become a set of digit strings, so a name is judged in one pass, whichever way its digits could be split.
import { CharSet, DIGIT } from './charset.js';
import type { Node } from './nfa.js';

/** Longest bound in a bracket (a billion nodes is beyond every cluster). */
export const MAX_RANGE_DIGITS = 9;
/** Most comma-separated parts in one bracket. */
export const MAX_RANGE_PARTS = 64;

export const RANGE_RE = /^\d+(-\d+)?(,\d+(-\d+)?)*$/;

const seq = (xs: Node[]): Node => ({ k: 'cat', xs });
const digits = (lo: number, hi: number): Node => ({ k: 'set', set: CharSet.range(0x30 + lo, 0x30 + hi) });
const anyDigits = (n: number): Node => ({ k: 'rep', x: { k: 'set', set: DIGIT }, min: n, max: n });

/** The digit strings of one length from `lo` to `hi` (same length, lo <= hi), digit by digit. */
function fixed(lo: string, hi: string): Node {
  if (lo === '') return seq([]);
  const [a, b] = [Number(lo[0]), Number(hi[0])];
  if (a === b) return seq([digits(a, a), fixed(lo.slice(1), hi.slice(1))]);
  const rest = lo.length - 1;
  const [zeros, nines] = ['0'.repeat(rest), '9'.repeat(rest)];
  const xs: Node[] = [];
  let [from, to] = [a, b];
  if (lo.slice(1) !== zeros) {
    xs.push(seq([digits(a, a), fixed(lo.slice(1), nines)]));
    from++;
  }
  const upper = hi.slice(1) !== nines ? seq([digits(b, b), fixed(zeros, hi.slice(1))]) : null;
  if (upper) to--;
  if (from <= to) xs.push(seq([digits(from, to), anyDigits(rest)]));
  if (upper) xs.push(upper);
  return { k: 'alt', xs };
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/**
 * `inner` matches RANGE_RE. Zero-padded bounds fix the width (gpu[001-064] matches gpu007, not gpu7); otherwise every
 * number of digits whose value is in a part (leading zeros allowed: gpu[1-16] matches gpu7 and gpu007).
 */
export function rangeNode(inner: string, fail: (why: string) => never): Node {
  const parts = inner.split(',').map((p) => p.split('-') as [string, string?]);
  if (parts.length > MAX_RANGE_PARTS) fail(`more than ${MAX_RANGE_PARTS} parts in [${inner.slice(0, 20)}...]`);
  const padded = parts.some(([lo]) => lo.length > 1 && lo.startsWith('0'));
  const width = parts[0]![0].length;
  const xs: Node[] = [];
  for (const [loText, hiText = loText] of parts) {
    if (loText.length > MAX_RANGE_DIGITS || hiText.length > MAX_RANGE_DIGITS) fail(`a bound of more than ${MAX_RANGE_DIGITS} digits in [${inner.slice(0, 20)}]`);
    const [lo, hi] = [Number(loText), Number(hiText)];
    if (lo > hi) fail(`empty range ${loText}-${hiText}`);
    if (padded) {
      const top = Math.min(hi, 10 ** width - 1);
      if (lo <= top) xs.push(fixed(pad(lo, width), pad(top, width)));
      continue;
    }
    for (let len = String(lo).length; len <= String(hi).length; len++) {
      const [a, b] = [Math.max(lo, len === 1 ? 0 : 10 ** (len - 1)), Math.min(hi, 10 ** len - 1)];
      xs.push(fixed(String(a), String(b)));
    }
  }
  const numbers: Node = { k: 'alt', xs };
  return padded ? numbers : seq([{ k: 'rep', x: { k: 'set', set: CharSet.of('0') }, min: 0, max: null }, numbers]);
}
