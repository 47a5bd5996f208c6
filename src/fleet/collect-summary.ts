// What `fleet collect` left beside the snapshots (DIR/gdrgate-collect.json): the nodes that did not answer, and why.
// The report lists them as missing, so a node that never sent a snapshot is not silently absent from the fleet.
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { exists } from '../host/entries.js';
import { readJsonFile } from '../host/json-file.js';
import { badNodeName } from '../slurm/node-name.js';
import type { NodeMissing } from './types.js';

export const COLLECT_SUMMARY = 'gdrgate-collect.json';

/** Pure: the missing nodes of a summary, or why it is not one. */
export function missingOfSummary(v: unknown): { ok: true; missing: NodeMissing[] } | { ok: false; error: string } {
  if (typeof v !== 'object' || v === null || !Array.isArray((v as { missing?: unknown }).missing)) return { ok: false, error: 'no "missing" list' };
  const missing: NodeMissing[] = [];
  for (const m of (v as { missing: unknown[] }).missing) {
    const node = (m as { node?: unknown } | null)?.node;
    const why = (m as { why?: unknown } | null)?.why;
    if (typeof node !== 'string' || typeof why !== 'string') return { ok: false, error: 'a "missing" entry without node and why' };
    const bad = badNodeName(node);
    if (bad) return { ok: false, error: `missing node ${JSON.stringify(node.slice(0, 64))}: ${bad}` };
    missing.push({ node, why: `fleet collect: ${why.slice(0, 300)}` });
  }
  return { ok: true, missing };
}

/** The summary in `dir`, if there is one; a broken one is a problem of the report, never fatal. */
export async function readCollectSummary(dir: string): Promise<{ missing: NodeMissing[]; problem: string | null }> {
  const file = path.join(dir, COLLECT_SUMMARY);
  if (!exists(file)) return { missing: [], problem: null };
  try {
    const r = missingOfSummary(await readJsonFile(file, 'the fleet collect summary'));
    return r.ok ? { missing: r.missing, problem: null } : { missing: [], problem: `${file}: ${r.error}, ignored` };
  } catch (e) {
    if (e instanceof ConfigError) return { missing: [], problem: `${e.message}, ignored` };
    throw e;
  }
}
