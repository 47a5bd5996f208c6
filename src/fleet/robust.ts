// Robust statistics of one class's figures: median and MAD (scaled to a standard deviation), the band they give,
// and which values fall outside it. A few broken nodes move neither the median nor the MAD, as they would a mean.

/** MAD × 1.4826 estimates the standard deviation of normally spread values. */
export const MAD_SCALE = 1.4826;
/** Modified z-score beyond which a value is an outlier (Iglewicz and Hoaglin's 3.5). */
export const OUTLIER_Z = 3.5;
/**
 * A spread floor, as a share of the median: identical nodes give MAD 0, and a band of zero width would flag a
 * node 0.1 % off. Run-to-run noise of a bandwidth probe is about 1-2 %.
 */
export const MIN_SPREAD = 0.02;

/**
 * A spread beyond which a class has no figure its nodes agree on, as a share of the median (MAD × 1.4826 over 10 %
 * of it: five times the noise floor): half a class on a weak rail puts the median between the two groups and a band
 * drawn from it holds both, so no node falls outside it. Such a path is not judged, and says so.
 */
export const UNCLEAR_SPREAD = 0.1;

export interface Band {
  readonly n: number;
  readonly median: number;
  /** Median absolute deviation, unscaled. */
  readonly mad: number;
  /** The spread used: max(MAD × 1.4826, MIN_SPREAD × |median|). */
  readonly sigma: number;
  readonly low: number;
  readonly high: number;
  /** The spread is beyond UNCLEAR_SPREAD: no clear majority, no node judged against this band. */
  readonly unclear?: boolean;
}

/** Median of the values (mean of the middle two for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = Float64Array.from(xs).sort();
  const m = s.length >> 1;
  // Halved before the sum: two values near the largest double would overflow to Infinity.
  return s.length % 2 ? s[m]! : s[m - 1]! / 2 + s[m]! / 2;
}

export function mad(xs: readonly number[], med = median(xs)): number {
  return median(xs.map((x) => Math.abs(x - med)));
}

export function band(xs: readonly number[]): Band | null {
  if (xs.length === 0) return null;
  const med = median(xs);
  const d = mad(xs, med);
  const sigma = Math.max(d * MAD_SCALE, MIN_SPREAD * Math.abs(med));
  const b = { n: xs.length, median: med, mad: d, sigma, low: med - OUTLIER_Z * sigma, high: med + OUTLIER_Z * sigma };
  return d * MAD_SCALE > UNCLEAR_SPREAD * Math.abs(med) ? { ...b, unclear: true } : b;
}

/** (x − median) / sigma: negative below the class. */
export function zScore(b: Band, x: number): number {
  return b.sigma === 0 ? 0 : (x - b.median) / b.sigma;
}

export type Side = 'low' | 'high' | null;

export function outlier(b: Band, x: number): Side {
  if (b.unclear) return null;
  return x < b.low ? 'low' : x > b.high ? 'high' : null;
}
