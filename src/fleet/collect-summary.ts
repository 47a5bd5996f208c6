// What `fleet collect` left beside the snapshots (DIR/gdrgate-collect.json): the nodes that did not answer, and why.
// The report lists them as missing, so a node that never sent a snapshot is not silently absent from the fleet.
import path from 'node:path';
import { lstatIfAny, type Stats } from '../host/entries.js';
import { readCapped } from '../host/fleet-files.js';
import { MAX_FILE_BYTES } from '../host/json-file.js';
import { badNodeName } from '../slurm/node-name.js';
import type { NodeMissing } from './types.js';

export const COLLECT_SUMMARY = 'gdrgate-collect.json';
/** Entries not taken that are said one by one; the rest are counted in one line (a summary of millions is no list to print). */
export const MAX_SAID = 20;

export interface CollectSummary {
  /** The nodes that did not answer, and why. */
  readonly missing: NodeMissing[];
  /** The nodes that answered (a snapshot written): one whose snapshot is not in the directory now is listed too. */
  readonly answered: string[];
  /** Entries that could not be taken, each said (the others stand); a summary that is none at all. */
  readonly problems: string[];
}

/** Pure: the nodes a summary names, entry by entry: one bad entry is said and skipped, never the whole list. */
export function nodesOfSummary(v: unknown): CollectSummary {
  const out: CollectSummary = { missing: [], answered: [], problems: [] };
  if (typeof v !== 'object' || v === null || !Array.isArray((v as { missing?: unknown }).missing)) return { ...out, problems: ['no "missing" list'] };
  const name = (node: unknown, what: string): string | null => {
    if (typeof node !== 'string') {
      out.problems.push(`a "${what}" entry without a node name, skipped`);
      return null;
    }
    const bad = badNodeName(node);
    if (bad) out.problems.push(`${what} node ${JSON.stringify(node.slice(0, 64))}: ${bad}, skipped`);
    return bad ? null : node;
  };
  for (const m of (v as { missing: unknown[] }).missing) {
    const node = name((m as { node?: unknown } | null)?.node, 'missing');
    const why = (m as { why?: unknown } | null)?.why;
    if (node !== null) out.missing.push({ node, why: `fleet collect: ${typeof why === 'string' ? why.slice(0, 300) : 'no snapshot written (no reason recorded)'}` });
  }
  const answered = (v as { answered?: unknown }).answered;
  if (Array.isArray(answered)) for (const a of answered) {
    const node = name((a as { node?: unknown } | null)?.node, 'answered');
    if (node !== null) out.answered.push(node);
  }
  if (out.problems.length <= MAX_SAID) return out;
  const more = out.problems.length - MAX_SAID;
  out.problems.length = MAX_SAID;
  out.problems.push(`${more} more entries not taken (not said one by one)`);
  return out;
}

/**
 * The summary in `dir`, if there is one; a broken one is a problem of the report (exit 1), never fatal. Read as fleet
 * reads every input: a symbolic link (dangling, or naming another fleet's summary) is never followed, nor a FIFO read.
 */
export async function readCollectSummary(dir: string): Promise<CollectSummary> {
  const file = path.join(dir, COLLECT_SUMMARY);
  const none = (why: string): CollectSummary => ({ missing: [], answered: [], problems: [`${file}: the fleet collect summary ${why}, ignored`] });
  let st: Stats | undefined;
  try {
    st = lstatIfAny(file);
  } catch (e) {
    return none(`cannot be read: ${(e as Error).message}`);
  }
  if (st === undefined) return { missing: [], answered: [], problems: [] };
  if (st.isSymbolicLink()) return none("is a symbolic link: not read (a link could name any file, another fleet's summary)");
  if (!st.isFile()) return none('is not a regular file');
  const raw = readCapped(file, MAX_FILE_BYTES);
  if (!raw.ok) return none(`cannot be read: ${raw.why}`);
  const text = raw.value.toString('utf8');
  if (text.trim() === '') return none('is empty');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return none(`is not valid JSON: ${(e as Error).message.slice(0, 200)}`);
  }
  const r = nodesOfSummary(v);
  return { ...r, problems: r.problems.map((p) => `${file}: ${p}`) };
}
