// What makes a tar a gdrgate snapshot: the manifest.json that build.ts writes as its first entry.
import type { SnapTree } from './tree.js';

/** Why `tree` is not a snapshot this gdrgate can replay, or null when its manifest says it is one. */
export function manifestProblem(tree: SnapTree): string | null {
  const m = tree.get('/manifest.json');
  if (!m) return 'no manifest.json: not written by gdrgate snapshot';
  if (m.kind !== 'file') return `manifest.json is a ${m.kind}, not a file`;
  let j: unknown;
  try {
    j = JSON.parse(Buffer.from(m.data).toString('utf8'));
  } catch (e) {
    return `manifest.json is not JSON: ${(e as Error).message}`;
  }
  const o = (j !== null && typeof j === 'object' ? j : {}) as Record<string, unknown>;
  if (o['tool'] !== 'gdrgate' || o['kind'] !== 'snapshot') return 'manifest.json is not a gdrgate snapshot manifest (tool "gdrgate", kind "snapshot")';
  if (o['format'] !== 1) return `manifest.json has format ${JSON.stringify(o['format'] ?? null)}; this gdrgate reads format 1`;
  return null;
}

/** A manifest's `time` (build.ts writes an ISO 8601 UTC time) in ms since the epoch; null for anything else. */
export function manifestTime(v: unknown): number | null {
  const ms = typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/.test(v) ? Date.parse(v) : NaN;
  return Number.isFinite(ms) ? ms : null;
}
