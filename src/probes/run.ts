// Runs planned probes one at a time inside a time budget: each its own timeout, never past the budget.
import type { Exec } from '../host/exec.js';
import { runIbWrite } from './ib-write-bw.js';
import { runNvbandwidth } from './nvbandwidth.js';
import type { ProbeOutcome, ProbeSpec, SampleContext } from './types.js';

/** Less than this left: the probe is not started (a loopback alone takes about a second to set up). */
export const MIN_PROBE_MS = 500;

export interface RunOptions {
  readonly exec: Exec;
  readonly budgetMs: number;
  /** Unit to start with: where the last run's budget cut it, so every HCA gets its turn. */
  readonly cursor: number;
  readonly ctx: SampleContext;
  /** Why a tool path may not be run (missing, not root's), or null. */
  readonly untrusted: (path: string) => string | null;
  /** A setpriv that can tie each probe's life to the gate's (host/exec.ts tieTo; tiedProbes), or none. */
  readonly tieTo?: string | undefined;
}

/** Where util-linux puts setpriv. */
export const SETPRIV = '/usr/bin/setpriv';

/**
 * SETPRIV when root alone can change it and it takes `--pdeathsig` (util-linux 2.33+; RHEL 8's 2.32 does not): probes
 * started under it die with the gate. Asked once per probing run (one short process); undefined otherwise, and the
 * probes then die with the gate only when it exits, not when it is killed.
 */
export async function tiedProbes(exec: Exec, untrusted: (path: string) => string | null): Promise<string | undefined> {
  if (untrusted(SETPRIV) !== null) return undefined;
  await exec.ready?.(); // its 5 s are setpriv's own, not module loading
  const r = await exec.run(SETPRIV, ['--pdeathsig', 'KILL', '--', SETPRIV, '--version'], { timeoutMs: 5_000, env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' } });
  return r.exitCode === 0 ? SETPRIV : undefined;
}

export interface RunResult {
  readonly outcomes: readonly ProbeOutcome[];
  /** Unit the next run should start with. */
  readonly cursor: number;
  readonly durationMs: number;
}

function toolsOf(s: ProbeSpec): string[] {
  return s.kind === 'ib_write_bw' && s.numactl !== null ? [s.numactl.path, s.tool] : [s.tool];
}

export async function runProbes(units: readonly (readonly ProbeSpec[])[], o: RunOptions): Promise<RunResult> {
  // Loading the exec module (seconds on a loaded node) is the run's deadline's, not the probe budget's.
  if (units.length) await o.exec.ready?.();
  const t0 = performance.now();
  const end = t0 + o.budgetMs;
  const start = units.length ? o.cursor % units.length : 0;
  const order = [...units.keys()].map((i) => (start + i) % units.length);
  const trust = new Map<string, string | null>();
  const whyNot = (p: string): string | null => {
    if (!trust.has(p)) trust.set(p, o.untrusted(p));
    return trust.get(p) ?? null;
  };
  const outcomes: ProbeOutcome[] = [];
  let cut: number | null = null;
  for (const u of order) {
    for (const spec of units[u]!) {
      const bad = toolsOf(spec).map(whyNot).find((w) => w !== null);
      const left = end - performance.now();
      if (bad) outcomes.push({ spec, kind: 'unusable', why: bad });
      else if (left < MIN_PROBE_MS) {
        cut ??= u;
        outcomes.push({ spec, kind: 'budget', why: `${Math.max(0, Math.round(left))} ms of the ${o.budgetMs} ms budget left` });
      } else {
        const deadline = performance.now() + Math.min(spec.timeoutMs, left);
        outcomes.push(spec.kind === 'ib_write_bw' ? await runIbWrite(o.exec, spec, deadline, o.ctx, o.tieTo) : await runNvbandwidth(o.exec, spec, deadline, o.ctx, o.tieTo));
      }
    }
  }
  return { outcomes, cursor: cut ?? start, durationMs: Math.round(performance.now() - t0) };
}
