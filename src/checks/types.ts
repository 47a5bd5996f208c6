// A check is one record: id, title, drain-reason label, every code it makes with its wording, its docs page (all but
// the id from its wording file, wording.ts), and a pure function from inventory (+ baseline) to findings. The
// registry (index.ts) derives everything else from these.
import type { AerHistory } from '../model/aer.js';
import type { BaselineClass } from '../model/baseline.js';
import { optionalPair, type CheckId, type Finding, type Layer, type Status } from '../model/finding.js';
import type { Inventory } from '../model/inventory.js';
import { checkWording, type RawCheckWording, type RawCodes, type Worded } from './wording.js';

export interface CheckContext {
  readonly inv: Inventory;
  /** The node's class in the baseline; null when run without one (universal rules only). */
  readonly baseline: BaselineClass | null;
  /** The AER counters of a reference run (pcie-aer's growth); absent: a run by hand, no growth known. */
  readonly aerHistory?: AerHistory | null;
  /** The judgement's time (growth rates); default now. */
  readonly now?: Date;
  /** Slurm's name for the node (gres.conf's NodeName= names Slurm's nodes, not hosts); null or absent: the host name read. */
  readonly node?: string | null;
}

/** The wording of one finding code (the field matrix): what the signal tells, what to do, the layer that owns it. */
export interface Wording {
  readonly tells: string;
  readonly do: string;
  readonly layer: Layer;
}
export type Codes = Readonly<Record<string, Wording>>;

/** Where a judgement is made: on the node (a check, the gate itself), inside the job (gdrgate task), from probes (the Epilog). */
export type Source = 'node' | 'job' | 'probe';

/**
 * A judgement that is not a node check, as a record: its id (the `check` its findings carry), its source and its
 * worded codes. A node check is a record too (`Check`, source node); the one catalog (catalog.ts) holds them all.
 */
export interface JudgementRecord<Id extends string = string, C extends Codes = Codes> {
  readonly id: Id;
  readonly source: Source;
  readonly codes: C;
}

export function defineRecord<const Id extends string, C extends Codes>(r: JudgementRecord<Id, C>): JudgementRecord<Id, C> {
  return r;
}

export interface Check<Id extends string = string, C extends Codes = Codes> {
  readonly id: Id;
  readonly title: string;
  /** First word after `gdrgate:` in a drain reason: what `sinfo -R`'s 20 characters show. */
  readonly reasonLabel: string;
  readonly codes: C;
  /** The page that says what it reads, when it fails, what to do, with a real output (docs/checks/<id>.md). */
  readonly docs: string;
  run(ctx: CheckContext): Finding[];
}

/**
 * A check from its id (a literal, so CheckId stays a union of literals), its wording file (src/checks/<id>.json,
 * checked here, once, as it loads) and its behaviour.
 */
export function defineCheck<const Id extends string, C extends RawCodes>(id: Id, wording: RawCheckWording<C>, behaviour: Pick<Check, 'run'>): Check<Id, Worded<C>> {
  const w = checkWording(`src/checks/${id}.json`, wording);
  return { id, title: w.title, reasonLabel: w.reasonLabel, codes: w.codes, docs: w.docs, run: behaviour.run };
}

/** Builds findings for one check so every call site stays one line; the code must be one of its wording file's keys. */
export type Finder<C extends object> = (code: keyof C & string, status: Status, subject: string, message: string, expected?: string, actual?: string) => Finding;

export function finder<C extends object>(check: CheckId, _codes: C): Finder<C> {
  return (code, status, subject, message, expected, actual) => ({
    check,
    // A check's codes are part of Code by construction (catalog.ts derives Code from the registry's records).
    code: code as Finding['code'],
    status,
    subject,
    message,
    ...optionalPair(expected, actual),
  });
}
