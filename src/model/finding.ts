// Findings are data: a check says what it saw; wording lives in checks/catalog.ts; reporters render.
export type Status = 'pass' | 'warn' | 'fail' | 'skip' | 'error';
export type Layer = 'server' | 'fabric' | 'scheduler' | 'security' | 'application';

/** A check's id, as the registry (src/checks/index.ts) declares it: the one list of checks. */
export type CheckId = import('../checks/index.js').CheckId;

export interface Finding {
  readonly check: CheckId | 'config' | 'internal';
  readonly code: string;
  readonly status: Status;
  /** What it is about: a BDF, `mlx5_0`, `GPU0-NIC3`, `slurmd`, `node`. */
  readonly subject: string;
  readonly message: string;
  readonly expected?: string;
  readonly actual?: string;
}

/** `expected`/`actual` present only when given (schemas forbid undefined members). */
export function optionalPair(expected: string | undefined, actual: string | undefined): { expected?: string; actual?: string } {
  return { ...(expected !== undefined ? { expected } : {}), ...(actual !== undefined ? { actual } : {}) };
}

/** Worst first: the order a report and a drain reason use. */
export const STATUS_RANK: Readonly<Record<Status, number>> = { fail: 0, error: 1, warn: 2, skip: 3, pass: 4 };
