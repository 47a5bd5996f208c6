// `gdrgate prolog` and `gdrgate health`: the gate Slurm runs. Fast checks, a hard deadline, an owned drain reason.
import { hostname } from 'node:os';
import { loadBaselineFor } from '../baseline/load.js';
import { configPath, DEFAULTS, fallbackPolicy, loadConfig, type Config } from '../config.js';
import { ConfigError } from '../errors.js';
import { EXEC_GRACE_MS, ExecaExec, type Exec } from '../host/exec.js';
import { untrustedReason } from '../host/trust.js';
import { takeDrainLock } from '../host/drain-lock.js';
import { log, setLogFile } from '../log.js';
import type { Finding } from '../model/finding.js';
import type { Host } from '../host/host.js';
import type { Inventory } from '../model/inventory.js';
import { buildReport, summarize } from '../report/report.js';
import { renderText } from '../report/text.js';
import { decide, outcomeOf, type Outcome, type PolicyOptions } from '../runner/policy.js';
import { runChecks, selectChecks, sortFindings, UsageError } from '../runner/run.js';
import { drainAction, resumeAction } from '../slurm/ownership.js';
import { buildReason, isOurs, sanitize } from '../slurm/reason.js';
import { Scontrol } from '../slurm/scontrol.js';
import { gather, out } from './common.js';
import { existsSync } from 'node:fs';
import { drillFile } from '../drill/path.js';
import type { ActiveDrill } from '../drill/hook.js';

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
  /** What the Prolog saw, for the per-job state the TaskProlog compares with. */
  readonly seen?: { readonly host: Host; readonly inv: Inventory; readonly memlockMin: number | 'unlimited' };
  /** gdrgate drill: the staged fault the Host answered with; its marker ends the drain reason. */
  readonly drill?: ActiveDrill | null;
}

/** The gate runs as root in every job's path: what it trusts must be changeable by root only (issue: hardening). */
export function requireTrusted(files: readonly string[]): void {
  const uid = process.getuid?.() ?? 0;
  for (const f of files) {
    const why = untrustedReason(f, uid);
    if (why) throw new ConfigError(`refusing ${f}: ${why}`);
  }
}

async function evaluate(cfg: Config, a: GateArgs, node: string, selfPid: number | undefined): Promise<Work> {
  const root = a.root ?? cfg.root;
  requireTrusted([a.baseline ?? cfg.baseline, cfg.scontrol]);
  const ids = selectChecks(cfg.checks);
  // Drill mode (gdrgate drill): one stat of the drill file on the pass path; the overlay loads only when one is there.
  const drill = existsSync(drillFile(cfg.stateDir)) ? await (await import('../drill/hook.js')).activeDrill(cfg.stateDir, node) : null;
  // The agent judges for its client: on the live root, the Prolog's own /proc/<pid>; a capture keeps its /proc/self.
  const pid = root === '/' ? selfPid : undefined;
  const [{ host, inv }, sel] = await Promise.all([gather(root, cfg.slurmdPidFiles, drill?.wrap, pid), loadBaselineFor(a.baseline ?? cfg.baseline, node)]);
  const findings = sortFindings(runChecks({ inv, baseline: sel.cls }, ids));
  return { outcome: outcomeOf(findings), findings, cls: sel.cls.name, hostName: inv.hostname, seen: { host, inv, memlockMin: sel.cls.memlockMin }, drill };
}

/** Settles with `work`, or rejects once `ms` have passed; the timer never outlives the race. */
export async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, rej) => {
    t = setTimeout(() => rej(new Error(`deadline of ${ms} ms exceeded while reading the node`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(t);
  }
}

/**
 * Writes our drain reason under the node's drain lock, only where we may (DESIGN §5: never over a reason that is not
 * ours, nothing when the state cannot be read). `ours`: the node now carries a gdrgate reason. Prolog and epilog share it.
 */
export async function drainOwned(scontrol: Scontrol, node: string, reason: string, stateDir: string): Promise<{ action: string; ours: boolean }> {
  const logger = await log();
  const lock = takeDrainLock(stateDir);
  try {
    const cur = lock.ok ? await scontrol.show(node) : ({ ok: false, why: lock.why } as const);
    const act = lock.ok ? drainAction(cur.ok ? cur.node : null) : ({ act: 'keep', why: lock.why } as const);
    if (!cur.ok) logger.error({ node, why: cur.why }, 'cannot read node state; not writing a drain reason');
    if (act.act !== 'drain') return { action: `kept: ${act.why}`, ours: cur.ok && isOurs(cur.node.reason) };
    const w = await scontrol.drain(node, reason);
    if (!w.ok) logger.error({ node, why: w.why }, 'drain failed');
    return { action: w.ok ? 'drained' : `drain failed: ${w.why}`, ours: w.ok };
  } finally {
    if (lock.ok) lock.release();
  }
}

export function toOutcome(e: unknown): Outcome {
  if (e instanceof ConfigError || e instanceof UsageError) return { kind: 'config-error', message: e.message };
  return { kind: 'internal-error', message: (e as Error).message ?? String(e) };
}

export function reasonFor(o: Outcome, job: string | undefined): string {
  if (o.kind === 'unhealthy') return buildReason(o.failing, job);
  const label = o.kind === 'config-error' ? 'config' : 'internal';
  const msg = o.kind === 'healthy' ? '' : o.message;
  return buildReason([{ check: label, code: `${label}-error`, status: 'fail', subject: '', message: sanitize(msg), actual: sanitize(msg) }], job);
}

/** How this run started: from dist/gate.blob (the Slurm wrappers' fast path), by loading modules, or in the agent. */
export type Startup = 'snapshot' | 'modules' | 'agent';

/** Whom the gate judges for: this process, or (gdrgate agent) the Prolog that asked, by its environment and pid. */
export interface GateContext {
  readonly env: NodeJS.ProcessEnv;
  readonly startup: Startup;
  /** The pid of the Prolog the agent answers (its limits, its place under slurmd); absent: this process. */
  readonly selfPid?: number;
}

interface Judged {
  readonly started: number;
  readonly node: string;
  readonly job: string | undefined;
  readonly cfg: Config | null;
  readonly policy: PolicyOptions;
  readonly work: Work;
  readonly decision: ReturnType<typeof decide>;
}

/** Reads the config, gathers the node and runs the checks under the deadline: no drain, no output. */
async function judge(a: GateArgs, ctx: GateContext): Promise<Judged> {
  const started = performance.now();
  const node = ctx.env.SLURMD_NODENAME || hostname().split('.')[0]!;
  const job = ctx.env.SLURM_JOB_ID;
  const file = configPath(a.config);
  let cfg: Config | null = null;
  let policy: PolicyOptions;
  let work: Work = { outcome: { kind: 'healthy' }, findings: [], cls: null, hostName: null };
  try {
    requireTrusted([file]);
    cfg = await loadConfig(file);
    setLogFile(cfg.logFile);
    policy = { onConfigError: cfg.onConfigError, onInternalError: cfg.onInternalError, drain: true };
    work = await withDeadline(evaluate(cfg, a, node, ctx.selfPid), cfg.deadlineMs);
  } catch (e) {
    policy ??= { ...(await fallbackPolicy(file)), drain: true };
    work = { ...work, outcome: toOutcome(e) };
  }
  return { started, node, job, cfg, policy: policy!, work, decision: decide(a.mode, work.outcome, policy!) };
}

/** A passing Prolog's per-job state, for the TaskProlog (gdrgate task): a failure is logged, never the exit code. */
async function recordState(j: Judged, ctx: GateContext): Promise<void> {
  const seen = j.work.seen;
  if (!seen || !j.cfg) return;
  const stateDir = j.cfg.stateDir;
  const st = await import('../state/prolog.js').then(
    (m) => m.recordJobState({ stateDir, env: ctx.env, node: j.node, ...seen }),
    (e: Error) => ({ ok: false, level: 'error', why: e.message }) as const,
  );
  if (!st.ok && st.level !== 'skip') (await log())[st.level]({ node: j.node, job: j.job, why: st.why }, 'per-job state not written; the TaskProlog will report it missing');
}

/** The one JSON line per run, whoever ran it (the agent adds the Prolog's pid as `client`); `extra`: what differs. */
async function logRun(a: GateArgs, j: Judged, ctx: GateContext, durationMs: number, extra: { reason: string | null; action: string; agent?: string | undefined }): Promise<void> {
  const { reason, action, agent } = extra;
  const client = ctx.selfPid !== undefined ? { client: ctx.selfPid } : {};
  (await log()).info(
    { mode: a.mode, node: j.node, job: j.job, durationMs, startup: ctx.startup, ...(agent ? { agent } : {}), ...client, result: j.work.outcome.kind, exitCode: j.decision.exitCode, failedOpen: j.decision.failedOpen, reason, action, summary: summarize(j.work.findings) },
    'gdrgate run',
  );
}

function summaryLine(a: GateArgs, j: Judged, durationMs: number, reason: string | null, action: string): string {
  return `gdrgate ${a.mode} node=${j.node}${j.job ? ` job=${j.job}` : ''} result=${j.work.outcome.kind} exit=${j.decision.exitCode} ${durationMs}ms${reason ? ` reason="${reason}"` : ''} action=${action}`;
}

export type AgentAnswer = { readonly healthy: true; readonly line: string } | { readonly healthy: false; readonly why: string };

/**
 * The agent's half of a Prolog (gdrgate agent): the same judgment as gateCommand, for the Prolog described by `ctx`;
 * `waiting()` says whether that Prolog still waits for the answer.
 * Only a healthy node is answered here (job state written, run logged, the summary line returned). Anything else,
 * fail-open included, is handed back: the Prolog then runs the gate in its own process, which judges again and is the
 * only one that drains.
 */
export async function agentProlog(config: string, ctx: GateContext, waiting: () => boolean): Promise<AgentAnswer> {
  const a: GateArgs = { mode: 'prolog', config, dryRun: false };
  const j = await judge(a, ctx);
  const o = j.work.outcome;
  if (o.kind !== 'healthy' || j.decision.drain || j.decision.exitCode !== 0) {
    const why = o.kind === 'unhealthy' ? `unhealthy: ${o.failing.length} failing finding(s)` : o.kind === 'healthy' ? 'not a plain pass' : `${o.kind}: ${o.message}`;
    return { healthy: false, why };
  }
  // A Prolog that gave up waiting has judged the job itself: write no state and log no run on its behalf.
  if (!waiting()) return { healthy: false, why: 'the Prolog stopped waiting' };
  await recordState(j, ctx);
  const durationMs = Math.round(performance.now() - j.started);
  await logRun(a, j, ctx, durationMs, { reason: null, action: 'none' });
  return { healthy: true, line: summaryLine(a, j, durationMs, null, 'none') };
}

export async function gateCommand(a: GateArgs, exec: Exec = new ExecaExec(), startup: Startup = 'modules'): Promise<number> {
  const ctx: GateContext = { env: process.env, startup };
  const j = await judge(a, ctx);
  const { started, node, job, cfg, work, decision } = j;
  const logger = await log();
  const scontrol = new Scontrol(exec, {
    path: cfg?.scontrol ?? DEFAULTS.scontrol,
    timeoutMs: cfg?.scontrolTimeoutMs ?? DEFAULTS.scontrolTimeoutMs,
    // scontrol shares the run's hard deadline (it is NHC's most reported hang); kill grace included.
    deadline: started + (cfg?.deadlineMs ?? DEFAULTS.deadlineMs) - EXEC_GRACE_MS,
  });
  let action = 'none';
  let reason: string | null = null;
  if (decision.drain) {
    reason = reasonFor(work.outcome, job);
    if (work.drill) reason = work.drill.mark(reason);
    if (a.dryRun) action = 'dry-run: would drain';
    else action = (await drainOwned(scontrol, node, reason, cfg?.stateDir ?? DEFAULTS.stateDir)).action;
  } else if (a.mode === 'health' && work.outcome.kind === 'healthy' && (cfg?.resumeWhenHealthy ?? true) && !a.dryRun) {
    const cur = await scontrol.show(node);
    const act = resumeAction(cur.ok ? cur.node : null);
    if (act.act === 'resume') {
      const w = await scontrol.resume(node);
      action = w.ok ? 'resumed' : `resume failed: ${w.why}`;
    }
  }
  if (a.mode === 'prolog' && !a.dryRun && work.outcome.kind === 'healthy') await recordState(j, ctx);
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
  // The wrapper could not start the gate from its blob (another Node's, or damaged) and ran it without: say so once a run.
  const blobFailed = startup === 'modules' ? ctx.env.GDRGATE_BLOB_FAILED : undefined;
  if (blobFailed) logger.warn({ node, job, blobExit: Number(blobFailed) }, 'dist/gate.blob could not be used by this Node; the gate ran without its startup snapshot. Remake it: node <gdrgate>/scripts/build-blob.mjs');
  // The wrapper asked the agent first and got no healthy answer: why, on the run line (the agent never drains: README, Agent).
  await logRun(a, j, ctx, durationMs, { reason, action, agent: ctx.env.GDRGATE_AGENT_SAID });
  if (work.outcome.kind !== 'healthy' || a.dryRun) {
    out(renderText(report).trimEnd());
    if (work.outcome.kind === 'config-error' || work.outcome.kind === 'internal-error') out(`${work.outcome.kind}: ${work.outcome.message}`);
  }
  out(summaryLine(a, j, durationMs, reason, action));
  return decision.exitCode;
}
