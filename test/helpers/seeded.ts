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

/** mulberry32 as a float source in [0, 1): a fixed seed makes every failure of a fuzzer reproducible. */
export function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
