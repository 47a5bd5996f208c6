// Findings are data: a check says what it saw; wording lives beside each check (its record's codes); reporters render.
export type Status = 'pass' | 'warn' | 'fail' | 'skip' | 'error';
export type Layer = 'server' | 'fabric' | 'scheduler' | 'security' | 'application';

/** A check's id, as the registry (src/checks/index.ts) declares it: the one list of checks. */
export type CheckId = import('../checks/index.js').CheckId;

/** Every code a finding can carry: a check's own (its record words it) or the gate's. */
type FindingCode = import('../checks/catalog.js').Code;

/**
 * The one shape of a finding, whatever made it: a node check (`Finding`), the epilog's bandwidth judgement
 * (`BwFinding`, check 'bandwidth') or the job's own view (`TaskFinding`). The source is the `check` field's type;
 * the code is one its wording table holds, so no finding renders with blank wording.
 */
export interface FindingOf<Source extends string, Code extends string> {
  readonly check: Source;
  readonly code: Code;
  readonly status: Status;
  /** What it is about: a BDF, `mlx5_0`, `GPU0-NIC3`, `slurmd`, `node`. */
  readonly subject: string;
  readonly message: string;
  readonly expected?: string;
  readonly actual?: string;
}

/** Any finding, whatever its source: what an outcome holds and a drain reason is made of. */
export type AnyFinding = FindingOf<string, string>;

/** A finding of a node check, or of the gate itself (its configuration, its own failure). */
export type Finding = FindingOf<CheckId | 'config' | 'internal', FindingCode>;

/** `expected`/`actual` present only when given (schemas forbid undefined members). */
export function optionalPair(expected: string | undefined, actual: string | undefined): { expected?: string; actual?: string } {
  return { ...(expected !== undefined ? { expected } : {}), ...(actual !== undefined ? { actual } : {}) };
}

/** Worst first: the order a report and a drain reason use. */
export const STATUS_RANK: Readonly<Record<Status, number>> = { fail: 0, error: 1, warn: 2, skip: 3, pass: 4 };
