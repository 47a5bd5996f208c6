// Streams the spool (plus samples not written to it) into per-path statistics, keeping each recipe for the reader.
import type { ProbeRecipe, Sample } from '../samples/sample.js';
import { readSpool, type ReadReport } from '../samples/spool.js';
import { CLOCK_TOLERANCE_MS, StatsAccumulator, type KeyStats, type Window } from '../samples/stats.js';

export interface Collected {
  readonly stats: KeyStats[];
  /** Recipe by hash, from the first sample that carried it. */
  readonly recipes: ReadonlyMap<string, ProbeRecipe>;
  readonly report: ReadReport;
  /** Node of the newest sample read (the spool is local: one node). */
  readonly node: string | null;
  /** Samples stamped later than now + CLOCK_TOLERANCE_MS (the clock ran ahead when they were written): left out. */
  readonly future: number;
}

/** `now`: this host's clock; samples stamped after now + CLOCK_TOLERANCE_MS are counted and left out (stats.ts). */
export function collectStats(dir: string, extra: readonly Sample[], window: Window, keep: (s: Sample) => boolean = () => true, now = Date.now()): Collected {
  const acc = new StatsAccumulator({ notAfter: now + CLOCK_TOLERANCE_MS });
  const recipes = new Map<string, ProbeRecipe>();
  let node: string | null = null;
  let newest = -Infinity;
  const add = (s: Sample): void => {
    if (!keep(s)) return;
    acc.add(s);
    if (!recipes.has(s.recipeHash)) recipes.set(s.recipeHash, s.recipe);
    if (s.ts >= newest) [newest, node] = [s.ts, s.node];
  };
  const report = readSpool(dir, add);
  for (const s of extra) add(s);
  return { stats: acc.result(window), recipes, report, node, future: acc.future };
}

/**
 * Why a spool read is no spool at all (it could not be listed, or none of its files could be read), or null. Such a
 * read is not an empty spool: no textfile is written from it (an older one is left to go stale), by the Epilog as by
 * `gdrgate samples --prom`.
 */
export function unreadableSpool(dir: string, r: ReadReport): string | null {
  return r.files.length === 0 && r.problems.length > 0 ? `cannot read the spool ${dir}: ${r.problems[0]!}${r.problems.length > 1 ? ` (+${r.problems.length - 1} more)` : ''}` : null;
}
