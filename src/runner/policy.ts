// The one function that turns an outcome into an exit code and a drain decision (DESIGN §6).
import { ConfigError, UsageError } from '../errors.js';
import type { AnyFinding } from '../model/finding.js';
import { exitCode, type ExitCode, type Result } from './exit.js';

export type Mode = 'check' | 'prolog' | 'epilog' | 'health' | 'task' | 'resume';
export type Policy = 'open' | 'closed';

export type Outcome =
  | { readonly kind: 'healthy' }
  | { readonly kind: 'unhealthy'; readonly failing: readonly AnyFinding[] }
  | { readonly kind: 'config-error'; readonly message: string }
  | { readonly kind: 'internal-error'; readonly message: string };

export interface Decision {
  readonly exitCode: ExitCode;
  readonly drain: boolean;
  /** Set when a tool failure was let through (fail-open): logged loudly and counted. */
  readonly failedOpen: boolean;
}

export interface PolicyOptions {
  readonly onConfigError: Policy;
  readonly onInternalError: Policy;
  /** check: drain only when asked with --drain. */
  readonly drain: boolean;
}

export function decide(mode: Mode, o: Outcome, p: PolicyOptions): Decision {
  const gate = mode === 'prolog' || mode === 'epilog' || mode === 'health';
  const d = (r: Result, drain: boolean, failedOpen = false): Decision => ({ exitCode: exitCode(r), drain, failedOpen });
  switch (o.kind) {
    case 'healthy':
      return d('ok', false);
    case 'unhealthy':
      return d('unhealthy', gate || p.drain);
    case 'config-error':
    case 'internal-error': {
      if (!gate) return d(o.kind === 'config-error' ? 'usage' : 'internal', false);
      const policy = o.kind === 'config-error' ? p.onConfigError : p.onInternalError;
      // Fail-open: the tool broke, the node may be fine; never drain a cluster because the gate is wrong.
      return policy === 'open' ? d('ok', false, true) : d('unhealthy', true);
    }
  }
}

/** What a thrown error means for the run: the user's or admin's to fix (config-error), or the tool's (internal). */
export function toOutcome(e: unknown): Outcome {
  if (e instanceof ConfigError || e instanceof UsageError) return { kind: 'config-error', message: e.message };
  return { kind: 'internal-error', message: e instanceof Error ? e.message : String(e) };
}

export function outcomeOf(findings: readonly AnyFinding[]): Outcome {
  const failing = findings.filter((f) => f.status === 'fail');
  if (failing.length) return { kind: 'unhealthy', failing };
  const errors = findings.filter((f) => f.status === 'error');
  if (errors.length) return { kind: 'internal-error', message: errors.map((e) => `${e.check}: ${e.message}`).join('; ') };
  return { kind: 'healthy' };
}
