// The one function that turns an outcome into an exit code and a drain decision (DESIGN §6).
import type { Finding } from '../model/finding.js';

export type Mode = 'check' | 'prolog' | 'epilog' | 'health' | 'task' | 'resume';
export type Policy = 'open' | 'closed';

export type Outcome =
  | { readonly kind: 'healthy' }
  | { readonly kind: 'unhealthy'; readonly failing: readonly Finding[] }
  | { readonly kind: 'config-error'; readonly message: string }
  | { readonly kind: 'internal-error'; readonly message: string };

export interface Decision {
  readonly exitCode: 0 | 1 | 2 | 3;
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
  switch (o.kind) {
    case 'healthy':
      return { exitCode: 0, drain: false, failedOpen: false };
    case 'unhealthy':
      return { exitCode: 1, drain: gate || p.drain, failedOpen: false };
    case 'config-error':
    case 'internal-error': {
      const code = o.kind === 'config-error' ? 2 : 3;
      if (!gate) return { exitCode: code, drain: false, failedOpen: false };
      const policy = o.kind === 'config-error' ? p.onConfigError : p.onInternalError;
      // Fail-open: the tool broke, the node may be fine; never drain a cluster because the gate is wrong.
      return policy === 'open' ? { exitCode: 0, drain: false, failedOpen: true } : { exitCode: 1, drain: true, failedOpen: false };
    }
  }
}

export function outcomeOf(findings: readonly Finding[]): Outcome {
  const failing = findings.filter((f) => f.status === 'fail');
  if (failing.length) return { kind: 'unhealthy', failing };
  const errors = findings.filter((f) => f.status === 'error');
  if (errors.length) return { kind: 'internal-error', message: errors.map((e) => `${e.check}: ${e.message}`).join('; ') };
  return { kind: 'healthy' };
}
