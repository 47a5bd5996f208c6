// Node names back into Slurm's compact form (gpu[0001-0003,0007]): what a class's `match` can hold for a fleet.
// Every pattern it writes is one the matcher compiles (src/baseline/match.ts): at most MAX_PATTERN_CHARS characters
// and MAX_RANGE_PARTS parts a bracket, bounds of at most MAX_RANGE_DIGITS digits; a group past those is split
// into several patterns (a class matches a name that one of its patterns matches), and patterns are joined by commas
// up to that length.
import { MAX_RANGE_DIGITS, MAX_RANGE_PARTS } from '../baseline/hostlist.js';
import { MAX_PATTERN_CHARS } from '../baseline/match.js';
import { byNatural } from '../model/order.js';

const split = (name: string): { prefix: string; digits: string } | null => {
  const m = /^(.*?)(\d+)$/.exec(name);
  return m && m[2]!.length <= MAX_RANGE_DIGITS ? { prefix: m[1]!, digits: m[2]! } : null;
};

/** Names with the same prefix and digit count share brackets; consecutive numbers become ranges. */
export function compressHostlist(names: readonly string[]): string[] {
  const groups = new Map<string, number[]>();
  const plain: string[] = [];
  for (const n of new Set(names)) {
    const s = split(n);
    if (!s) {
      plain.push(n);
      continue;
    }
    const key = `${s.prefix}\u0000${s.digits.length}`;
    const l = groups.get(key);
    if (l) l.push(Number(s.digits));
    else groups.set(key, [Number(s.digits)]);
  }
  const out = [...plain];
  for (const [key, nums] of groups) {
    const [prefix, width] = key.split('\u0000') as [string, string];
    const pad = (x: number): string => String(x).padStart(Number(width), '0');
    if (nums.length === 1) {
      out.push(`${prefix}${pad(nums[0]!)}`);
      continue;
    }
    const sorted = [...nums].sort((a, b) => a - b);
    const parts: string[] = [];
    for (let i = 0; i < sorted.length; ) {
      let j = i;
      while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
      parts.push(i === j ? pad(sorted[i]!) : `${pad(sorted[i]!)}-${pad(sorted[j]!)}`);
      i = j + 1;
    }
    // As many parts a bracket as the matcher takes and the pattern's length allows.
    const room = MAX_PATTERN_CHARS - prefix.length - 2;
    let chunk: string[] = [];
    let len = 0;
    const flush = (): void => {
      if (chunk.length) out.push(chunk.length === 1 && !chunk[0]!.includes('-') ? `${prefix}${chunk[0]}` : `${prefix}[${chunk.join(',')}]`);
      chunk = [];
      len = 0;
    };
    for (const p of parts) {
      const add = p.length + (chunk.length ? 1 : 0);
      if (chunk.length >= MAX_RANGE_PARTS || len + add > room) flush();
      chunk.push(p);
      len += p.length + (chunk.length > 1 ? 1 : 0);
    }
    flush();
  }
  return packed(out.sort(byNatural));
}

/**
 * Patterns joined by commas (a Slurm hostlist's separator, the matcher's too) into as few patterns as fit
 * MAX_PATTERN_CHARS: a fleet of 10,000 names without numbers is ~400 patterns, not 10,000.
 */
function packed(patterns: readonly string[]): string[] {
  const out: string[] = [];
  let cur = '';
  for (const p of patterns) {
    if (cur && cur.length + 1 + p.length <= MAX_PATTERN_CHARS) cur += `,${p}`;
    else {
      if (cur) out.push(cur);
      cur = p;
    }
  }
  if (cur) out.push(cur);
  return out;
}
