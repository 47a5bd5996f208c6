// A node's summary (`<node>.summary.json`, schemas/fleet-summary.schema.json): the facts `fleet report` compares
// (the node's compare view, src/compare/view.ts), computed on the node from the very snapshot written beside it,
// with that snapshot's SHA-256. The report trusts a summary only when it validates, names this node, is of this
// view version, and its digest is the snapshot's now; anything else is stale, and the node is read from its
// snapshot instead, with a note saying why.
import { nul } from '../model/fact.js';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { compareView, VIEW_VERSION, type CompareView } from '../compare/view.js';
import { pciListUnknown } from '../inventory/pci-known.js';
import type { Inventory } from '../model/inventory.js';
import { readCapped, sha256File } from '../host/fleet-files.js';
import { validatorFor } from '../schema.js';
import { MAX_FILE_BYTES as MAX_SNAPSHOT_BYTES } from '../snapshot/limits.js';
import { VERSION } from '../version.js';

export const SUMMARY_FORMAT = 'gdrgate-node-summary/1';
/** A summary of the largest node seen (254 PCI functions) is about 150 KB. */
export const MAX_SUMMARY_BYTES = 1024 * 1024;
export const SUMMARY_SUFFIX = '.summary.json';

export const summaryName = (node: string): string => `${node}${SUMMARY_SUFFIX}`;

export interface NodeSummary {
  readonly format: typeof SUMMARY_FORMAT;
  readonly node: string;
  readonly gdrgate: string;
  /** `time`: when the snapshot was taken (its manifest's), ISO 8601; null when it records none. */
  readonly snapshot: { readonly file: string; readonly bytes: number; readonly sha256: string; readonly time: string | null };
  /** The host name the snapshot records (fleet report judges a snapshot only as the host it was taken on). */
  readonly hostname: string | null;
  /** Why the snapshot's PCI device list is unknown; null when it was read. */
  readonly pciUnknown: string | null;
  readonly view: CompareView;
}

export const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** Pure: the summary of `node`'s snapshot (its bytes, the inventory read from them, and its manifest's time in ms). */
export function buildSummary(node: string, snapshotFile: string, snapshot: Uint8Array, inv: Inventory, time: number | null): NodeSummary {
  return {
    format: SUMMARY_FORMAT,
    node,
    gdrgate: VERSION,
    snapshot: { file: path.basename(snapshotFile), bytes: snapshot.length, sha256: sha256(snapshot), time: time === null ? null : new Date(time).toISOString() },
    hostname: nul(inv.hostname),
    pciUnknown: pciListUnknown(inv),
    view: compareView(inv),
  };
}

export type SummaryRead = { readonly ok: true; readonly summary: NodeSummary } | { readonly ok: false; readonly why: string };

/** Pure: a parsed summary checked against the node, the schema's errors, and the snapshot's digest now. */
export function checkSummary(v: unknown, errors: readonly string[], node: string, snapshot: { readonly sha256: string; readonly bytes: number; readonly file: string }): SummaryRead {
  if (errors.length) return { ok: false, why: `it does not validate (${errors.slice(0, 3).join('; ')})` };
  const s = v as NodeSummary;
  if (s.node !== node) return { ok: false, why: `it is ${JSON.stringify(s.node)}'s, not ${node}'s` };
  if (s.view.version !== VIEW_VERSION) return { ok: false, why: `its facts are of another gdrgate (view ${String(s.view.version)}, this one reads ${VIEW_VERSION})` };
  if (s.snapshot.file !== path.basename(snapshot.file)) return { ok: false, why: `it was made from ${JSON.stringify(s.snapshot.file)}, not ${path.basename(snapshot.file)}` };
  if (s.snapshot.sha256 !== snapshot.sha256 || s.snapshot.bytes !== snapshot.bytes) return { ok: false, why: 'its digest is not that of the snapshot beside it (the snapshot changed since)' };
  return { ok: true, summary: s };
}

/** The summary of `node` in `file`, checked against the snapshot `snapshotFile`; why not, when it cannot be used. */
export async function readSummary(file: string, node: string, snapshotFile: string): Promise<SummaryRead> {
  const raw = readCapped(file, MAX_SUMMARY_BYTES);
  if (!raw.ok) return { ok: false, why: raw.kind === 'missing' ? 'none' : raw.why };
  let v: unknown;
  try {
    v = JSON.parse(raw.value.toString('utf8'));
  } catch (e) {
    return { ok: false, why: `it is not JSON (${(e as Error).message.slice(0, 120)})` };
  }
  const errors = (await validatorFor('fleet-summary'))(v);
  const digest = sha256File(snapshotFile, MAX_SNAPSHOT_BYTES);
  if (!digest.ok) return { ok: false, why: `the snapshot's digest cannot be taken: ${digest.why}` };
  return checkSummary(v, errors, node, { ...digest.value, file: snapshotFile });
}
