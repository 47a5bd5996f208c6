// The one wording table (field matrix), derived from every record: the node checks (the registry), the gate's own
// two codes, the job view's records (task/records.ts) and the Epilog's probes (epilog/bandwidth.ts). Each code is
// worded once, `{ tells, do, layer }`, beside what makes it; here they are gathered, with their source, and ordered.
import { BANDWIDTH, type BwCode } from '../epilog/bandwidth.js';
import type { AnyFinding } from '../model/finding.js';
import { STATUS_RANK } from '../model/finding.js';
import { byText } from '../model/order.js';
import { JOB_VIEW, type TaskCode } from '../task/records.js';
import { CHECK_IDS, CHECKS, GATE_SOURCES } from './index.js';
import { defineRecord, type Codes, type JudgementRecord, type Source, type Wording } from './types.js';

/** Codes the gate makes about itself, not a check: a configuration it cannot use, or its own failure. */
const GATE = defineRecord({
  id: 'gate',
  source: 'node',
  codes: {
    'config-error': { tells: 'The gate could not run: its configuration or baseline is invalid.', do: 'Fix the file named in the message; run gdrgate baseline validate.', layer: 'scheduler' },
    'internal-error': { tells: 'The gate itself failed.', do: 'Look at the gate log; report the error with a snapshot.', layer: 'scheduler' },
  },
});

type CodesOf<T> = T extends { readonly codes: infer C } ? keyof C & string : never;

/** Every code a node report can carry: the checks' and the gate's. */
export type Code = CodesOf<(typeof CHECKS)[number]> | CodesOf<typeof GATE>;
/** Every code any finding can carry, whatever its source. */
export type AnyCode = Code | TaskCode | BwCode;
export type { BwCode, TaskCode };

/** A code's wording and where it is judged. */
export interface Entry extends Wording {
  readonly source: Source;
}

/** Every record, in report order: the node checks (the registry's order), the gate, the job view, the probes. */
export const RECORDS: readonly JudgementRecord<string, Codes>[] = [...CHECKS.map((c) => ({ id: c.id, source: 'node' as const, codes: c.codes })), GATE, ...JOB_VIEW, BANDWIDTH];

/** The one catalog: every code of every record (test/checks/wording.test.ts: none worded twice). */
export const WORDING: Readonly<Record<AnyCode, Entry>> = Object.fromEntries(RECORDS.flatMap((r) => Object.entries(r.codes).map(([code, w]) => [code, { tells: w.tells, do: w.do, layer: w.layer, source: r.source }]))) as Record<AnyCode, Entry>;

/** The node's codes: what a check report words (test/checks/registry.test.ts keeps it complete). */
export const CATALOG: Readonly<Record<Code, Entry>> = Object.fromEntries(Object.entries(WORDING).filter(([, e]) => e.source === 'node')) as Record<Code, Entry>;

/** The wording of a code: total over the codes the compiler knows, so no finding can render with a blank one. */
export function entry(code: AnyCode): Entry {
  return WORDING[code];
}

/** The order of a finding's source (its `check`): the gate's own, the registry's checks, the job view, the probes. */
const ORDER = new Map<string, number>([...new Set<string>([...GATE_SOURCES, ...CHECK_IDS, ...RECORDS.map((r) => r.id)])].map((id, i) => [id, i]));

/** The one order of findings, whatever made them: worst status first, then source order, then subject, then code. */
export function sortFindings<F extends AnyFinding>(fs: readonly F[]): F[] {
  return [...fs].sort((a, b) => STATUS_RANK[a.status] - STATUS_RANK[b.status] || (ORDER.get(a.check) ?? -1) - (ORDER.get(b.check) ?? -1) || byText(a.subject, b.subject) || byText(a.code, b.code));
}
