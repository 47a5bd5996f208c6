// Which class each node belongs to: the baseline's (its host patterns, as every command selects a class), or one
// class for the whole directory when no baseline is named.
import { compilePattern, matchesAll, type HostPattern } from '../baseline/match.js';
import type { Baseline } from '../model/baseline.js';

/** The class name of a directory judged without a baseline. */
export const FLEET_CLASS = 'fleet';
/** Nodes no class of the baseline matches: grouped, and said, never judged against a class they are not in. */
export const UNMATCHED = '(no class)';

/** A classifier with each class's patterns compiled once (a thousand nodes, one compilation). */
export function classifier(b: Baseline | null): (node: string) => string {
  if (b === null) return () => FLEET_CLASS;
  const compiled: [string, HostPattern[]][] = b.classes.map((c) => [c.name, c.match.map(compilePattern)]);
  return (node) => compiled.find(([, ps]) => matchesAll(ps, node))?.[0] ?? UNMATCHED;
}
