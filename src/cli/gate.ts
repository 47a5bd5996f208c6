// `gdrgate prolog` and `gdrgate health`: the gate Slurm runs. Fast checks, a hard deadline, an owned drain reason.
import { hostname } from 'node:os';
import { loadBaselineFor } from '../baseline/load.js';
import { configPath, DEFAULTS, fallbackPolicy, loadConfig, type Config } from '../config.js';
import { ConfigError } from '../errors.js';
import { ExecaExec, type Exec } from '../host/exec.js';
import { untrustedReason } from '../host/trust.js';
import { log, setLogFile } from '../log.js';
import type { Finding } from '../model/finding.js';
import { buildReport } from '../report/report.js';
import { renderText } from '../report/text.js';
import { decide, outcomeOf, type Outcome, type PolicyOptions } from '../runner/policy.js';
import { runChecks, selectChecks, sortFindings, UsageError } from '../runner/run.js';
import { drainAction, resumeAction } from '../slurm/ownership.js';
import { buildReason, sanitize } from '../slurm/reason.js';
import { Scontrol } from '../slurm/scontrol.js';
import { gather, out } from './common.js';

export interface GateArgs {
  readonly mode: 'prolog' | 'health';
  readonly config?: string | undefined;
  readonly root?: string | undefined;
  readonly baseline?: string | undefined;
  readonly dryRun: boolean;
}

interface Work {
  readonly outcome: Outcome;
  readonly findings: readonly Finding[];
  readonly cls: string | null;
  readonly hostName: string | null;
}

/** The gate runs as root in every job's path: what it trusts must be changeable by root only (issue: hardening). */
function requireTrusted(files: readonly string[]): void {
  const uid = process.getuid?.() ?? 0;
  for (const f of files) {
    const why = untrustedReason(f, uid);
    if (why) throw new ConfigError(`refusing ${f}: ${why}`);
  }
}

async function evaluate(cfg: Config, a: GateArgs, node: string): Promise<Work> {
  const root = a.root ?? cfg.root;
  requireTrusted([a.baseline ?? cfg.baseline, cfg.scontrol]);
  const ids = selectChecks(cfg.checks);
  const [{ inv }, sel] = await Promise.all([gather(root, cfg.slurmdPidFiles), loadBaselineFor(a.baseline ?? cfg.baseline, node)]);
  const findings = sortFindings(runChecks({ inv, baseline: sel.cls }, ids));
  return { outcome: outcomeOf(findings), findings, cls: sel.cls.name, hostName: inv.hostname };
}

function deadline(ms: number): { promise: Promise<never>; clear: () => void } {
  let t: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, rej) => {
    t = setTimeout(() => rej(new Error(`deadline of ${ms} ms exceeded while reading the node`)), ms);
  });
  return { promise, clear: () => clearTimeout(t) };
}

function toOutcome(e: unknown): Outcome {
  if (e instanceof ConfigError || e instanceof UsageError) return { kind: 'config-error', message: e.message };
  return { kind: 'internal-error', message: (e as Error).message ?? String(e) };
}

function reasonFor(o: Outcome, job: string | undefined): string {
  if (o.kind === 'unhealthy') return buildReason(o.failing, job);
  const label = o.kind === 'config-error' ? 'config' : 'internal';
  const msg = o.kind === 'healthy' ? '' : o.message;
  return buildReason([{ check: label, code: `${label}-error`, status: 'fail', subject: '', message: sanitize(msg), actual: sanitize(msg) }], job);
}

export async function gateCommand(a: GateArgs, exec: Exec = new ExecaExec()): Promise<number> {
  const started = performance.now();
  const node = process.env.SLURMD_NODENAME || hostname().split('.')[0]!;
  const job = process.env.SLURM_JOB_ID;
  const file = configPath(a.config);
  let cfg: Config | null = null;
  let policy: PolicyOptions;
  let work: Work = { outcome: { kind: 'healthy' }, findings: [], cls: null, hostName: null };
  try {
    requireTrusted([file]);
    cfg = await loadConfig(file);
    setLogFile(cfg.logFile);
    policy = { onConfigError: cfg.onConfigError, onInternalError: cfg.onInternalError, drain: true };
    const dl = deadline(cfg.deadlineMs);
    try {
      work = await Promise.race([evaluate(cfg, a, node), dl.promise]);
    } finally {
      dl.clear();
    }
  } catch (e) {
    policy ??= { ...(await fallbackPolicy(file)), drain: true };
    work = { ...work, outcome: toOutcome(e) };
  }
  const decision = decide(a.mode, work.outcome, policy!);
  const logger = await log();
  const scontrol = new Scontrol(exec, {
    path: cfg?.scontrol ?? DEFAULTS.scontrol,
    // scontrol shares the run's deadline (it is NHC's most reported hang).
    timeoutMs: Math.max(500, Math.min(cfg?.scontrolTimeoutMs ?? DEFAULTS.scontrolTimeoutMs, (cfg?.deadlineMs ?? DEFAULTS.deadlineMs) - (performance.now() - started))),
  });
  let action = 'none';
  let reason: string | null = null;
  if (decision.drain) {
    reason = reasonFor(work.outcome, job);
    if (a.dryRun) action = 'dry-run: would drain';
    else {
      const cur = await scontrol.show(node);
      const act = drainAction(cur.ok ? cur.node : null);
      if (!cur.ok) logger.error({ node, why: cur.why }, 'cannot read node state; not writing a drain reason');
      if (act.act === 'drain') {
        const w = await scontrol.drain(node, reason);
        action = w.ok ? 'drained' : `drain failed: ${w.why}`;
        if (!w.ok) logger.error({ node, why: w.why }, 'drain failed');
      } else action = `kept: ${act.why}`;
    }
  } else if (a.mode === 'health' && work.outcome.kind === 'healthy' && (cfg?.resumeWhenHealthy ?? true) && !a.dryRun) {
    const cur = await scontrol.show(node);
    const act = resumeAction(cur.ok ? cur.node : null);
    if (act.act === 'resume') {
      const w = await scontrol.resume(node);
      action = w.ok ? 'resumed' : `resume failed: ${w.why}`;
    }
  }
  if (decision.failedOpen) logger.error({ node, job, outcome: work.outcome }, 'gdrgate could not judge this node; letting the job run (fail-open)');
  const report = buildReport({
    command: a.mode,
    inv: null,
    root: a.root ?? cfg?.root ?? '/',
    findings: work.findings,
    outcome: work.outcome,
    decision,
    started,
    baseline: work.cls ? { file: a.baseline ?? cfg!.baseline, class: work.cls } : null,
  });
  const durationMs = Math.round(performance.now() - started);
  logger.info({ mode: a.mode, node, job, durationMs, result: work.outcome.kind, exitCode: decision.exitCode, failedOpen: decision.failedOpen, reason, action, summary: report.summary }, 'gdrgate run');
  if (work.outcome.kind !== 'healthy' || a.dryRun) {
    out(renderText(report).trimEnd());
    if (work.outcome.kind === 'config-error' || work.outcome.kind === 'internal-error') out(`${work.outcome.kind}: ${work.outcome.message}`);
  }
  out(`gdrgate ${a.mode} node=${node}${job ? ` job=${job}` : ''} result=${work.outcome.kind} exit=${decision.exitCode} ${durationMs}ms${reason ? ` reason="${reason}"` : ''} action=${action}`);
  return decision.exitCode;
}
