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
 * `inner` matches RANGE_RE. As Slurm's hostlist (hostlist.c: a range's width is the length of its low bound as
 * written; a number is printed zero-padded to that width, and in full where it is wider), each part on its own:
 * gpu[001-064] matches gpu007, not gpu7; gpu[1-16] matches gpu7, not gpu007; gpu[01-100] matches gpu100;
 * gpu[1-9,010-012] matches gpu010. Checked against `scontrol show hostnames` (test/baseline/hostlist-oracle.test.ts).
 */
export function rangeNode(inner: string, fail: (why: string) => never): Node {
  const parts = inner.split(',').map((p) => p.split('-') as [string, string?]);
  if (parts.length > MAX_RANGE_PARTS) fail(`more than ${MAX_RANGE_PARTS} parts in [${inner.slice(0, 20)}...]`);
  const xs: Node[] = [];
  for (const [loText, hiText = loText] of parts) {
    if (loText.length > MAX_RANGE_DIGITS || hiText.length > MAX_RANGE_DIGITS) fail(`a bound of more than ${MAX_RANGE_DIGITS} digits in [${inner.slice(0, 20)}]`);
    const [lo, hi] = [Number(loText), Number(hiText)];
    if (lo > hi) fail(`empty range ${loText}-${hiText}`);
    const width = loText.length;
    // The numbers that fit the width, written with exactly `width` digits.
    const top = Math.min(hi, 10 ** width - 1);
    if (lo <= top) xs.push(fixed(pad(lo, width), pad(top, width)));
    // Wider ones as they are (no leading zero).
    for (let len = width + 1; len <= String(hi).length; len++) {
      const [a, b] = [Math.max(lo, 10 ** (len - 1)), Math.min(hi, 10 ** len - 1)];
      if (a <= b) xs.push(fixed(String(a), String(b)));
    }
  }
  return { k: 'alt', xs };
}
