// Node names back into Slurm's compact form (gpu[0001-0003,0007]): what a class's `match` can hold for a fleet.
import { byNatural } from '../model/order.js';

const split = (name: string): { prefix: string; digits: string } | null => {
  const m = /^(.*?)(\d+)$/.exec(name);
  return m ? { prefix: m[1]!, digits: m[2]! } : null;
};

/** Names with the same prefix and digit count share one bracket; consecutive numbers become ranges. */
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
    groups.set(key, [...(groups.get(key) ?? []), Number(s.digits)]);
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
    out.push(`${prefix}[${parts.join(',')}]`);
  }
  return out.sort(byNatural);
}
