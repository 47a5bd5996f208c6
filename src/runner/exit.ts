// The one table of exit codes (DESIGN §6). Every command ends in a Result; only this module turns it into a number.
export type Result =
  /** Healthy, done, or nothing to do. */
  | 'ok'
  /** The node (or the job's view) is unhealthy, or what was asked could not be done to it (still drained). */
  | 'unhealthy'
  /** A usage or configuration error, or a request refused (a reason not ours, a node not fenced for a drill). */
  | 'usage'
  /** The tool itself broke, or could not reach what it must act on (scontrol unreadable or failing). */
  | 'internal';

export type ExitCode = 0 | 1 | 2 | 3;

const CODES: Readonly<Record<Result, ExitCode>> = { ok: 0, unhealthy: 1, usage: 2, internal: 3 };

export function exitCode(r: Result): ExitCode {
  return CODES[r];
}

/** The error a top-level catch got: a usage/config error (ours to explain) or anything else (a defect, logged). */
export function resultOfError(usage: boolean): Result {
  return usage ? 'usage' : 'internal';
}

/** The verdicts exitCode() needs from findings, for the job-view (task) rules below. */
interface StatusOnly {
  readonly status: 'pass' | 'warn' | 'fail' | 'skip' | 'error';
}

/**
 * gdrgate task. As TaskProlog: ok unless --fail and a finding failed (a non-zero TaskProlog fails the task); an
 * untrusted record is an error, never a fail: "could not tell" must not kill a job. Standalone: unhealthy on a
 * fail or warn.
 */
export function taskResult(findings: readonly StatusOnly[], mode: 'taskprolog' | 'standalone', failOnFinding: boolean): Result {
  if (mode === 'standalone') return findings.some((f) => f.status === 'fail' || f.status === 'warn') ? 'unhealthy' : 'ok';
  return failOnFinding && findings.some((f) => f.status === 'fail') ? 'unhealthy' : 'ok';
}
