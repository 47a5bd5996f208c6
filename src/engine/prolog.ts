// The Slurm gate's judgement (prolog and health), shared by the gate's own process (cli/gate.ts) and the agent
// (agent/serve.ts): config (trusted), the node through the engine under the hard deadline, the policy's decision.
// No drain, no output here: those are the caller's.
import { existsSync } from 'node:fs';
import { configPath, fallbackPolicy, loadTrustedConfig, trustedFiles, type Config } from '../config.js';
import type { ActiveDrill } from '../drill/hook.js';
import { drillFile } from '../drill/path.js';
import type { Host } from '../host/host.js';
import { log, setLogFile } from '../log.js';
import type { Finding } from '../model/finding.js';
import type { Inventory } from '../model/inventory.js';
import { summarize } from '../report/report.js';
import { Deadline, runOrigin, withDeadline } from '../runner/deadline.js';
import { decide, toOutcome, type Decision, type Outcome, type PolicyOptions } from '../runner/policy.js';
import { selectChecks } from '../runner/run.js';
import { readLastAer } from '../state/aer.js';
import { parseJobId } from '../state/names.js';
import { aerReferenceOf } from '../checks/aer-judge.js';
import { evaluateNode } from './evaluate.js';
import { nodeName } from './node.js';

export interface GateArgs {
  readonly mode: 'prolog' | 'health';
  readonly config?: string | undefined;
  readonly root?: string | undefined;
  readonly baseline?: string | undefined;
  readonly dryRun: boolean;
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

/** What the Prolog saw, for the per-job state the TaskProlog compares with. */
export interface Seen {
  readonly host: Host;
  readonly inv: Inventory;
  readonly memlockMin: number | 'unlimited';
  /** The class hands jobs the node's NCCL topology file (baseline ncclTopo). */
  readonly ncclTopo?: boolean;
}

export interface Judged {
  readonly started: number;
  /** performance.now() by which the whole run must end (its Deadline's `at`), or null when no config said. */
  readonly deadlineAt: number | null;
  readonly node: string;
  readonly job: string | undefined;
  readonly cfg: Config | null;
  readonly policy: PolicyOptions;
  readonly outcome: Outcome;
  readonly findings: readonly Finding[];
  readonly cls: string | null;
  readonly seen: Seen | null;
  /** gdrgate drill: the staged fault the Host answered with; its marker ends the drain reason. */
  readonly drill: ActiveDrill | null;
  readonly decision: Decision;
}

type Work = Pick<Judged, 'outcome' | 'findings' | 'cls' | 'seen' | 'drill'>;

async function evaluate(cfg: Config, a: GateArgs, node: string, deadline: Deadline, selfPid: number | undefined): Promise<Work> {
  const baseline = a.baseline ?? cfg.baseline;
  // Drill mode (gdrgate drill): one stat of the drill file on the pass path; the overlay loads only when one is there.
  const drill = existsSync(drillFile(cfg.stateDir)) ? await (await import('../drill/hook.js')).activeDrill(cfg.stateDir, node) : null;
  const ev = await evaluateNode({
    root: a.root ?? cfg.root,
    baseline,
    node,
    trust: trustedFiles(cfg, baseline),
    pidFiles: cfg.slurmdPidFiles,
    gresConf: cfg.gresConf,
    selfPid,
    wrap: drill?.wrap,
    checks: selectChecks(cfg.checks),
    deadline,
    // pcie-aer's growth: against the previous run's counters (one small state file; missing or corrupt: none known).
    aerHistory: readLastAer(cfg.stateDir),
  });
  const cls = ev.baseline!.cls;
  return { outcome: ev.outcome, findings: ev.findings, cls: cls.name, seen: { host: ev.host, inv: ev.inv, memlockMin: cls.memlockMin, ncclTopo: cls.ncclTopo === true }, drill };
}

/** Reads the config, gathers the node and runs the checks under the deadline: no drain, no output. */
export async function judge(a: GateArgs, ctx: GateContext): Promise<Judged> {
  const started = performance.now();
  const node = nodeName(ctx.env);
  const job = ctx.env.SLURM_JOB_ID;
  const file = configPath(a.config);
  let cfg: Config | null = null;
  let policy: PolicyOptions | undefined;
  let work: Work = { outcome: { kind: 'healthy' }, findings: [], cls: null, seen: null, drill: null };
  let deadlineAt: number | null = null;
  try {
    cfg = await loadTrustedConfig(file);
    setLogFile(cfg.logFile);
    policy = { onConfigError: cfg.onConfigError, onInternalError: cfg.onInternalError, drain: true };
    // The deadline is the whole run's as slurmd sees it (DESIGN §9): from the wrapper's start, else this process's
    // (Node's start included). The agent judges for a Prolog already running: from the question's arrival.
    const deadline = new Deadline(cfg.deadlineMs, ctx.startup === 'agent' ? started : runOrigin(ctx.env));
    deadlineAt = deadline.at;
    work = await withDeadline(evaluate(cfg, a, node, deadline, ctx.selfPid), deadline);
  } catch (e) {
    policy ??= { ...(await fallbackPolicy(file)), drain: true };
    work = { ...work, outcome: toOutcome(e) };
  }
  return { started, deadlineAt, node, job, cfg, policy, ...work, decision: decide(a.mode, work.outcome, policy) };
}

/** A passing Prolog's per-job state, for the TaskProlog (gdrgate task): a failure is logged, never the exit code. */
export async function recordState(j: Judged, ctx: GateContext): Promise<void> {
  if (!j.seen || !j.cfg) return;
  const stateDir = j.cfg.stateDir;
  const seen = j.seen;
  const st = await import('../state/prolog.js').then(
    (m) => m.recordJobState({ stateDir, env: ctx.env, node: j.node, ...seen }),
    (e: Error) => ({ ok: false, level: 'error', why: e.message }) as const,
  );
  if (!st.ok && st.level !== 'skip') (await log())[st.level]({ node: j.node, job: j.job, why: st.why }, 'per-job state not written; the TaskProlog will report it missing');
  if (st.ok && st.ncclTopoWhy) (await log()).warn({ node: j.node, job: j.job, why: st.ncclTopoWhy }, 'NCCL topology file not written; the job gets none');
}

/**
 * pcie-aer's reference (docs/limits-and-state.md, "AER reference"): the counters this judgement read become the one
 * the next run compares with, so every correctable error is judged once. Written by the run whose judgement stands:
 * the gate's own Prolog and health check, pass or fail (a drain judged the growth up to now; the next run judges only
 * what comes after); the agent's only when it answers. A Prolog's also goes under the job's name, for its Epilog.
 * Never a drill's staged counters, never a dry run's. A failure is logged, never the exit code.
 */
export async function recordAer(j: Judged, ctx: GateContext, mode: GateArgs['mode'] = 'prolog'): Promise<void> {
  // A drill's staged counters are not the node's: they must not become the next run's reference.
  if (!j.seen || !j.cfg || j.drill) return;
  const stateDir = j.cfg.stateDir;
  const ref = aerReferenceOf(j.seen.inv, new Date(), mode === 'prolog' ? parseJobId(ctx.env.SLURM_JOB_ID) : null);
  try {
    (await import('../state/aer-write.js')).writeAer(stateDir, ref);
  } catch (e) {
    (await log()).error({ node: j.node, job: j.job, why: (e as Error).message }, 'AER counters not recorded; the next run knows no growth');
  }
}

/** The one JSON line per run, whoever ran it (the agent adds the Prolog's pid as `client`); `extra`: what differs. */
export async function logRun(a: GateArgs, j: Judged, ctx: GateContext, durationMs: number, extra: { reason: string | null; action: string; agent?: string | undefined }): Promise<void> {
  const { reason, action, agent } = extra;
  const client = ctx.selfPid !== undefined ? { client: ctx.selfPid } : {};
  (await log()).info(
    { mode: a.mode, node: j.node, job: j.job, durationMs, startup: ctx.startup, ...(agent ? { agent } : {}), ...client, result: j.outcome.kind, exitCode: j.decision.exitCode, failedOpen: j.decision.failedOpen, reason, action, summary: summarize(j.findings) },
    'gdrgate run',
  );
}

export function summaryLine(a: GateArgs, j: Judged, durationMs: number, reason: string | null, action: string): string {
  return `gdrgate ${a.mode} node=${j.node}${j.job ? ` job=${j.job}` : ''} result=${j.outcome.kind} exit=${j.decision.exitCode} ${durationMs}ms${reason ? ` reason="${reason}"` : ''} action=${action}`;
}

export type AgentAnswer = { readonly healthy: true; readonly line: string } | { readonly healthy: false; readonly why: string };

/**
 * The agent's half of a Prolog (gdrgate agent): the same judgement as the gate's, for the Prolog described by `ctx`;
 * `waiting()` says whether that Prolog still waits for the answer.
 * Only a healthy node is answered here (job state written, run logged, the summary line returned). Anything else,
 * fail-open included, is handed back: the Prolog then runs the gate in its own process, which judges again and is the
 * only one that drains.
 */
export async function agentProlog(config: string, ctx: GateContext, waiting: () => boolean): Promise<AgentAnswer> {
  const a: GateArgs = { mode: 'prolog', config, dryRun: false };
  const j = await judge(a, ctx);
  const o = j.outcome;
  if (o.kind !== 'healthy' || j.decision.drain || j.decision.exitCode !== 0) {
    const why = o.kind === 'unhealthy' ? `unhealthy: ${o.failing.length} failing finding(s)` : o.kind === 'healthy' ? 'not a plain pass' : `${o.kind}: ${o.message}`;
    return { healthy: false, why };
  }
  // A Prolog that gave up waiting has judged the job itself: write no state and log no run on its behalf.
  if (!waiting()) return { healthy: false, why: 'the Prolog stopped waiting' };
  await recordState(j, ctx);
  await recordAer(j, ctx);
  const durationMs = Math.round(performance.now() - j.started);
  await logRun(a, j, ctx, durationMs, { reason: null, action: 'none' });
  return { healthy: true, line: summaryLine(a, j, durationMs, null, 'none') };
}
