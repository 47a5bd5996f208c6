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

/** What a SnapshotHost takes from manifest.json: each field on its own, so one malformed field costs only itself. */
export interface ManifestFields {
  readonly time: number | null;
  readonly version: string | null;
  readonly unreadable: ReadonlyMap<string, string>;
  readonly missing: readonly string[];
  /** null: no `listed` field (a snapshot from before it). */
  readonly listed: readonly string[] | null;
}

/** The fields of a manifest's bytes; null when they are no JSON object (every absence then reads as unknown). */
export function manifestFields(bytes: Uint8Array): ManifestFields | null {
  let j: { unreadable?: unknown; missing?: unknown; listed?: unknown; version?: unknown; time?: unknown };
  try {
    const parsed: unknown = JSON.parse(Buffer.from(bytes).toString('utf8'));
    if (parsed === null || typeof parsed !== 'object') return null;
    j = parsed as typeof j;
  } catch {
    return null;
  }
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const unreadable = new Map<string, string>();
  for (const u of Array.isArray(j.unreadable) ? (j.unreadable as unknown[]) : []) {
    const e = u as { path?: unknown; reason?: unknown } | null;
    if (e !== null && typeof e === 'object' && typeof e.path === 'string' && typeof e.reason === 'string') unreadable.set(e.path, e.reason);
  }
  return { time: manifestTime(j.time), version: typeof j.version === 'string' ? j.version : null, unreadable, missing: strings(j.missing), listed: Array.isArray(j.listed) ? strings(j.listed) : null };
}
