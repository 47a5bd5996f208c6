// Pure parser for /proc/<pid>/limits (fs/proc/base.c proc_pid_limits: fixed-width columns).
import type { Limit } from '../model/inventory.js';
import type { Parsed } from './sysfs.js';

function value(tok: string): number | 'unlimited' | undefined {
  if (tok === 'unlimited') return 'unlimited';
  return /^\d+$/.test(tok) ? Number(tok) : undefined;
}

/** All rows, keyed by the limit's name ("Max locked memory"). */
export function parseLimits(text: string): Parsed<Map<string, Limit>> {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (!lines[0]?.startsWith('Limit')) return { ok: false, error: 'not a limits file: header "Limit ... Soft Limit" missing' };
  const out = new Map<string, Limit>();
  for (const line of lines.slice(1)) {
    // Name is words; then soft, hard, optional units. The name's words and its spaces are told apart: `Max [A-Za-z ]+?`
    // then `\s+` could split a run of spaces two ways at every point, in time quadratic in the row (a capture's row of
    // 1 MiB of spaces held a Prolog for many minutes past its deadline).
    const m = /^(Max(?: +[A-Za-z]+)+?)\s+(unlimited|\d+)\s+(unlimited|\d+)(?:\s+\S+)?\s*$/.exec(line);
    if (!m) continue;
    const soft = value(m[2]!);
    const hard = value(m[3]!);
    if (soft === undefined || hard === undefined) continue;
    out.set(m[1]!.trim(), { soft, hard });
  }
  return out.size ? { ok: true, value: out } : { ok: false, error: 'no limit rows found' };
}

export function parseMemlock(text: string): Parsed<Limit> {
  const all = parseLimits(text);
  if (!all.ok) return all;
  const ml = all.value.get('Max locked memory');
  return ml ? { ok: true, value: ml } : { ok: false, error: '"Max locked memory" row missing' };
}

/** Bytes → "64 KiB", "8 MiB", "unlimited". */
export function formatBytes(v: number | 'unlimited'): string {
  if (v === 'unlimited') return 'unlimited';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = v;
  let i = 0;
  while (n >= 1024 && n % 1024 === 0 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n} ${units[i]}`;
}

/** "64K", "8M", "unlimited", "65536" (bytes) → bytes. */
export function parseSize(text: string): Parsed<number | 'unlimited'> {
  const s = text.trim();
  if (s === 'unlimited' || s === 'infinity') return { ok: true, value: 'unlimited' };
  const m = /^(\d+)\s*([KMGT])?(?:i?B)?$/i.exec(s);
  if (!m) return { ok: false, error: `unexpected size ${JSON.stringify(s)}` };
  const mult: Record<string, number> = { K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };
  return { ok: true, value: Number(m[1]) * (m[2] ? mult[m[2].toUpperCase()]! : 1) };
}
