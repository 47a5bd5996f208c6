// A seeded source of random choices for generators: the same seed, the same inputs, so a failure replays.
export interface Seeded {
  /** An integer in [0, n). */
  int(n: number): number;
  pick<T>(xs: readonly T[]): T;
  /** `n` pieces from `parts`, joined. */
  join(parts: readonly string[], n: number): string;
}

/** xorshift32; `seed` must not be 0. */
export function seeded(seed: number): Seeded {
  let s = seed >>> 0 || 1;
  const next = (): number => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { int, pick, join: (parts, n) => Array.from({ length: n }, () => pick(parts)).join('') };
}
