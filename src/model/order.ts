// Orderings for report rows. Plain code-unit order, never String#localeCompare: the first localeCompare of a
// process builds an ICU collator, ~16 ms of a prolog's ~100 ms on an 8-GPU node, for names (BDFs, mlx5_N,
// check codes) that are ASCII and compare the same either way.

/** Code-unit order (BDFs, check codes, subjects). */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const CHUNKS = /\d+|\D+/g;

/** Digit runs compared as numbers, the rest by code unit: mlx5_2 before mlx5_10, GPU9 before GPU10. */
export function byNatural(a: string, b: string): number {
  const x = a.match(CHUNKS) ?? [];
  const y = b.match(CHUNKS) ?? [];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const p = x[i]!;
    const q = y[i]!;
    if (p === q) continue;
    const digits = p.charCodeAt(0) <= 57 && q.charCodeAt(0) <= 57 && p.charCodeAt(0) >= 48 && q.charCodeAt(0) >= 48;
    if (digits && Number(p) !== Number(q)) return Number(p) - Number(q);
    return byText(p, q);
  }
  return x.length - y.length || byText(a, b);
}
