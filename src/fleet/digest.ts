// A node's view key: the SHA-256 of its compare view (src/compare/view.ts) as JSON. Nodes of one key hold the same
// values in everything a comparison and the fleet's fingerprint read, so one comparison answers for all of them,
// the judge keeps one view per key however many nodes share it, and a read-pool worker sends a view once per key.
// One key means one value everywhere in the view; the converse need not hold (a summary written with its fields in
// another order): two alike nodes under two keys cost a second comparison, never a wrong one.
import { createHash } from 'node:crypto';
import type { CompareView } from '../compare/view.js';

export function viewKey(v: CompareView): string {
  return createHash('sha256').update(JSON.stringify(v)).digest('hex');
}
