// Per-path sample statistics (count, min, p50 (the middle value), nearest-rank p95/p99, last) over all samples and over a
// recent window.
import type { BandwidthUnit, Sample } from './sample.js';

/**
 * How far ahead of this host's clock a timestamp (a sample's, the probe stamp's) may lie and still be believed: NTP
 * slews and small steps (chrony's makestep, ntpd's 128 ms step threshold) stay far below a minute, and so does the
 * gap between a probe's Date.now() and the reader's. Anything later was stamped while the clock ran ahead (a bad RTC
 * at boot, corrected afterwards) and its time means nothing.
 */
export const CLOCK_TOLERANCE_MS = 60_000;

/** Samples are compared only with the same probe, path, direction and recipe (DESIGN §7). */
export interface StatsKey {
  readonly probe: string;
  readonly gpu: string | null;
  readonly nic: string | null;
  readonly direction: string;
  readonly recipeHash: string;
}

export interface Summary {
  readonly count: number;
  readonly min: number;
  /** The middle value (`middle`: of an even count the upper one), not the nearest rank. */
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  /** Value of the newest sample (greatest ts; the later one in the spool on a tie). */
  readonly last: number;
  readonly lastTs: number;
}

export interface KeyStats {
  readonly key: StatsKey;
  readonly unit: BandwidthUnit;
  readonly all: Summary;
  /** Over the window; null when no sample of this key falls in it. */
  readonly recent: Summary | null;
  /** Samples of this key whose unit differs from its first sample's; they are left out, never converted. */
  readonly unitMismatches: number;
  /** Samples of this key stamped after the accumulator's `notAfter` (from the future): left out of all and recent. */
  readonly future: number;
}

/** The last `lastN` samples (by ts) of each key, and/or those with ts >= `sinceTs`; both given means both apply. */
export interface Window {
  readonly lastN?: number;
  readonly sinceTs?: number;
}

/**
 * Nearest-rank percentile of an ascending array: the value at 1-based rank ceil(p/100 · n), so p50 of [1,2,3,4] is 2
 * and every result is a value that was actually measured. null for an empty array or p outside (0, 100].
 */
export function nearestRank(sorted: ArrayLike<number>, p: number): number | null {
  if (sorted.length === 0 || !(p > 0 && p <= 100)) return null;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? null;
}

/**
 * The middle value of an ascending array, the upper of the two middle values of an even count: it is below a bound
 * exactly when more than half of the values are, so a window half of whose samples are low never reads as low (the
 * Epilog drains on it: with the lower middle value, two busy runs of four drained a healthy node). null when empty.
 */
export function middle(sorted: ArrayLike<number>): number | null {
  return sorted.length === 0 ? null : (sorted[Math.floor(sorted.length / 2)] ?? null);
}

/** Below this many values a plain array is sorted: a typed array costs more to make than a few values to sort. */
const TYPED_FROM = 64;

export function summarize(values: ArrayLike<number>, ts: ArrayLike<number>): Summary | null {
  if (values.length === 0) return null;
  let lastI = 0;
  for (let i = 1; i < ts.length; i++) if ((ts[i] ?? 0) >= (ts[lastI] ?? 0)) lastI = i;
  // Samples are finite (sample.ts): both sorts order them alike.
  const sorted = values.length >= TYPED_FROM ? Float64Array.from(values).sort() : Array.from(values).sort((a, b) => a - b);
  return {
    count: values.length,
    min: sorted[0] ?? 0,
    p50: middle(sorted) ?? 0,
    p95: nearestRank(sorted, 95) ?? 0,
    p99: nearestRank(sorted, 99) ?? 0,
    last: values[lastI] ?? 0,
    lastTs: ts[lastI] ?? 0,
  };
}

/**
 * A column of doubles: a plain array (V8 keeps it as packed doubles, 8 bytes a sample, so 1M samples cost 16 MB for
 * value + ts). Not a typed array: a fleet report holds two per path of every node (160,000 for 10,000 nodes of 8
 * rails), most with a few samples, and each typed array (and each view of one) costs far more to make than those.
 */
class Column {
  readonly data: number[] = [];
  get length(): number {
    return this.data.length;
  }
  push(v: number): void {
    this.data.push(v);
  }
  view(): readonly number[] {
    return this.data;
  }
}

interface Series {
  readonly key: StatsKey;
  readonly unit: BandwidthUnit;
  readonly values: Column;
  readonly ts: Column;
  /** ts never decreased in arrival order: the last N by ts is then simply the tail. */
  ordered: boolean;
  unitMismatches: number;
  future: number;
}

/**
 * Feed samples one at a time (e.g. from readSpool); only the numbers are kept, not the samples.
 *
 * `notAfter` (the reader's now + CLOCK_TOLERANCE_MS): a sample stamped later was written while the clock ran ahead,
 * and its ts says nothing about when it was measured. It is left out of every statistic and counted (`future`), never
 * ordered in: by ts it would stay "the newest" (the window's tail, `last`) until the clock caught up, and the window
 * judged with a fresh measurement would be those old samples instead of the measurement and its true predecessors.
 */
export class StatsAccumulator {
  private readonly series = new Map<string, Series>();
  private readonly notAfter: number;
  /** Samples left out as from the future, all keys together (a key with only such samples has no KeyStats). */
  future = 0;

  constructor(opts: { readonly notAfter?: number } = {}) {
    this.notAfter = opts.notAfter ?? Infinity;
  }

  add(s: Sample): void {
    const id = `${s.probe}\u0000${s.gpu ?? ''}\u0000${s.nic ?? ''}\u0000${s.direction}\u0000${s.recipeHash}`;
    let x = this.series.get(id);
    if (x === undefined) {
      const key: StatsKey = { probe: s.probe, gpu: s.gpu, nic: s.nic, direction: s.direction, recipeHash: s.recipeHash };
      x = { key, unit: s.unit, values: new Column(), ts: new Column(), ordered: true, unitMismatches: 0, future: 0 };
      this.series.set(id, x);
    }
    if (s.ts > this.notAfter) {
      x.future++;
      this.future++;
      return;
    }
    if (s.unit !== x.unit) {
      x.unitMismatches++;
      return;
    }
    if (x.ts.length > 0 && s.ts < (x.ts.data[x.ts.length - 1] ?? 0)) x.ordered = false;
    x.values.push(s.value);
    x.ts.push(s.ts);
  }

  /** One entry per key, sorted by probe, gpu, nic, direction, recipeHash. */
  result(window: Window = {}): KeyStats[] {
    const out: KeyStats[] = [];
    for (const x of this.series.values()) {
      const values = x.values.view();
      const ts = x.ts.view();
      const all = summarize(values, ts);
      if (all === null) continue;
      const recent = window.lastN === undefined && window.sinceTs === undefined ? all : windowed(x, window);
      out.push({ key: x.key, unit: x.unit, all, recent, unitMismatches: x.unitMismatches, future: x.future });
    }
    const k = (s: KeyStats): string => [s.key.probe, s.key.gpu ?? '', s.key.nic ?? '', s.key.direction, s.key.recipeHash].join('\u0000');
    return out.sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
  }
}

function windowed(x: Series, w: Window): Summary | null {
  let values = x.values.view();
  let ts = x.ts.view();
  if (!x.ordered) {
    // Concurrent epilogs and rotation can append slightly out of ts order: sort by ts (stable on ties) first.
    const idx = Array.from({ length: values.length }, (_, i) => i).sort((a, b) => (ts[a] ?? 0) - (ts[b] ?? 0) || a - b);
    const v = values;
    const t = ts;
    values = idx.map((i) => v[i] ?? 0);
    ts = idx.map((i) => t[i] ?? 0);
  }
  let start = 0;
  if (w.sinceTs !== undefined) {
    // First index with ts >= sinceTs (ts ascending).
    let hi = ts.length;
    while (start < hi) {
      const mid = (start + hi) >>> 1;
      if ((ts[mid] ?? 0) < w.sinceTs) start = mid + 1;
      else hi = mid;
    }
  }
  if (w.lastN !== undefined) start = Math.max(start, ts.length - Math.max(0, Math.floor(w.lastN)));
  return summarize(values.slice(start), ts.slice(start));
}
