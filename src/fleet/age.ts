// How old a figure or a snapshot may be and still be judged as the node now (`fleet report --max-age`): a time
// older than that, or later than this host's clock by more than the clock tolerance, is said and not judged.
import { CLOCK_TOLERANCE_MS } from '../samples/stats.js';

/**
 * Default of --max-age: 7 days. The epilog probes a node when a job ends on it and its sampling policy allows, so a
 * node in service adds figures within days; one whose newest figure is older has stopped measuring (its epilog is
 * broken, it left the batch partition), and node_exporter serves its old textfile for ever.
 */
export const DEFAULT_MAX_AGE_MS = 7 * 86_400_000;

const UNITS: readonly (readonly [string, number])[] = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]];

/** `7d`, `36h`, `90m`: the largest unit that divides the duration evenly. */
export function formatDuration(ms: number): string {
  for (const [u, n] of UNITS) if (ms % n === 0) return `${ms / n}${u}`;
  return `${ms}ms`;
}

/** An ISO 8601 UTC time, without the milliseconds when they are 0 (`2000-01-01T00:00:00Z`). */
export const isoTime = (ms: number): string => {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString().replace(/\.000Z$/, 'Z');
};

export interface AgeRule {
  /** This host's clock, ms since the epoch. */
  readonly now: number;
  readonly maxAgeMs: number;
}

/**
 * Why a time (ms) is not judged under the rule: not a time (NaN, ±Inf: an exporter's or a relabelling's), older than
 * max-age, or ahead of the clock; null when it is judged. Every comparison with NaN is false: it must be asked first.
 */
export function ageProblem(ms: number, r: AgeRule): string | null {
  if (!Number.isFinite(ms)) return `${ms}, not a time (its age cannot be told)`;
  if (ms < r.now - r.maxAgeMs) return `${isoTime(ms)}, older than ${formatDuration(r.maxAgeMs)}`;
  if (ms > r.now + CLOCK_TOLERANCE_MS) return `${isoTime(ms)}, more than ${CLOCK_TOLERANCE_MS / 1000} s ahead of this host's clock (its age cannot be told)`;
  return null;
}
