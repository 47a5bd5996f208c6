// One Slurm hook's life cycle, whatever the hook (LBNL NHC runs one driver in every mode): the config and its log
// file, the deadline, the judgement, the policy's decision, the drain or resume, the recording, the run's log line
// and its summary line, each written once here. Prolog, health, epilog, task and the agent differ only in `judge`
// and `record`; what a mode's Slurm contract fixes (DESIGN §5, §6) is one row of MODES. Few imports on purpose: a
// gate-only bundle imports this module without the command line.
import { configPath, DEFAULTS, fallbackPolicy, loadConfig, loadTrustedConfig, type Config } from '../config.js';
import { SCAN_LIMITS } from '../epilog/holders-limits.js';
import { EXEC_GRACE_MS, ExecaExec, type Exec } from '../host/exec.js';
import { tellDrained } from '../host/verdict.js';
import { log, setLogFile } from '../log.js';
import type { AnyFinding, Status } from '../model/finding.js';
import { escapeControls } from '../report/escape.js';
import { Deadline, runOrigin } from '../runner/deadline.js';
import { exitCode } from '../runner/exit.js';
import { decide, toOutcome, type Decision, type Outcome, type PolicyOptions } from '../runner/policy.js';
import { drainOwned, reasonFor, resumeOwned } from '../slurm/drain.js';
import { healthLeaves, notToldNow } from '../slurm/ownership.js';
import { Scontrol } from '../slurm/scontrol.js';
import { afterwards, message, rendered } from './after-verdict.js';
import { nodeName } from './node.js';

export type HookMode = 'prolog' | 'health' | 'epilog' | 'task';

/** How this run started: from dist/gate.blob (the Slurm wrappers' fast path), by loading modules, or in the agent. */
export type Startup = 'snapshot' | 'modules' | 'agent';

/** What a mode's Slurm contract fixes; everything else is the hook's `judge` and `record`. */
interface ModeRules {
  /** Root's files only (a hook that may drain: host/trust.ts), or what this user can read, defaults when none. */
  readonly config: 'trusted' | 'optional';
  /** May drain the node (the TaskProlog runs as the job's user and never does). */
  readonly drains: boolean;
  /** Resumes a drain of ours when judged healthy (the HealthCheckProgram; config resumeWhenHealthy). */
  readonly resumes: boolean;
  /** Non-zero only after our own drain: Slurm drains on every other non-zero Epilog, with its bare "Epilog error". */
  readonly exitOnlyAfterOwnDrain: boolean;
  /** The deadline counts from the wrapper's start (runOrigin: as slurmd sees the run), or from this run's. */
  readonly origin: 'run' | 'now';
  /** Time the judgement may take beyond the deadline (the Epilog's probe budget and the port-counter look before it). */
  readonly budgetMs: (cfg: Config | null) => number;
  /** The run's log line and what a fail-open run logs; null: none (the TaskProlog runs per task, as the job's user). */
  readonly log: { readonly msg: string; readonly levelByExit: boolean; readonly gate: boolean; readonly failOpenMsg: string } | null;
  /** The summary line on stdout; false: stdout is the TaskProlog's protocol. */
  readonly summary: boolean;
}

const none = (): number => 0;
const GATE_LOG = { msg: 'gdrgate run', levelByExit: false, gate: true, failOpenMsg: 'gdrgate could not judge this node; letting the job run (fail-open)' } as const;

export const MODES: Readonly<Record<HookMode, ModeRules>> = {
  prolog: { config: 'trusted', drains: true, resumes: false, exitOnlyAfterOwnDrain: false, origin: 'run', budgetMs: none, log: GATE_LOG, summary: true },
  health: { config: 'trusted', drains: true, resumes: true, exitOnlyAfterOwnDrain: false, origin: 'run', budgetMs: none, log: GATE_LOG, summary: true },
  epilog: {
    config: 'trusted',
    drains: true,
    resumes: false,
    exitOnlyAfterOwnDrain: true,
    origin: 'now',
    budgetMs: (cfg) => (cfg?.probes ? cfg.probes.budgetMs + cfg.probes.quiet.windowMs + SCAN_LIMITS.ms : 0), // and the looks before them
    log: { msg: 'gdrgate epilog', levelByExit: true, gate: false, failOpenMsg: 'gdrgate epilog could not judge this node; not draining (fail-open)' },
    summary: true,
  },
  task: { config: 'optional', drains: false, resumes: false, exitOnlyAfterOwnDrain: false, origin: 'now', budgetMs: none, log: null, summary: false },
};

/** What every hook knows before it judges. `cfg` is null when the config could not be read (its outcome is then a config error). */
export interface HookRun {
  readonly mode: HookMode;
  readonly env: NodeJS.ProcessEnv;
  readonly started: number;
  readonly node: string;
  readonly job: string | null | undefined;
  readonly file: string;
  readonly cfg: Config | null;
  /** Why the config could not be read (a hook that judges without one says so in its own words). */
  readonly cfgError: string | null;
  readonly dryRun: boolean;
  readonly startup: Startup;
  /** The pid of the Prolog the agent answers; absent: this process. */
  readonly selfPid?: number | undefined;
  /** The whole run's: the judgement races it, scontrol ends before it. */
  readonly deadline: Deadline;
  readonly exec: Exec;
}

/** A hook's verdict. `W`: what its `record` needs besides (the Prolog's view of the node, the job's view). */
export interface Judgement<W = unknown, F extends AnyFinding = AnyFinding> {
  readonly outcome: Outcome;
  readonly findings: readonly F[];
  readonly work: W | null;
  /** Words the summary line carries after node and job (the Epilog's view=…, aer=…, probes=…). */
  readonly detail?: string | undefined;
  /** Nothing to decide (an Epilog without probes): the summary line ends after the detail, no run is logged. */
  readonly brief?: boolean | undefined;
  /** The run line's own fields: after durationMs, after the counts (`summary` replaces the counts). */
  readonly logged?: { readonly head?: object; readonly summary?: object; readonly tail?: object } | undefined;
  /** Ends the drain reason (gdrgate drill's marker). */
  readonly markReason?: ((reason: string) => string) | undefined;
  /** The reason labels this verdict judged (its checks', and the gate's own): the only drains health resumes. */
  readonly judged?: readonly string[] | undefined;
}

/** What was done about a verdict: what `record` and the caller see. */
export interface Acted {
  readonly decision: Decision;
  readonly code: number;
  readonly reason: string | null;
  readonly action: string;
  readonly durationMs: number;
}

export interface HookSpec<W, F extends AnyFinding = AnyFinding> {
  readonly mode: HookMode;
  readonly env: NodeJS.ProcessEnv;
  /** --config; else $GDRGATE_CONFIG, else the default path. */
  readonly config?: string | undefined;
  readonly dryRun?: boolean | undefined;
  readonly startup?: Startup | undefined;
  readonly selfPid?: number | undefined;
  /** The job the hook runs for; default SLURM_JOB_ID as given. */
  readonly job?: string | null | undefined;
  readonly exec?: Exec | undefined;
  judge(run: HookRun): Promise<Judgement<W, F>>;
  /** After the decision and the drain: what this hook keeps (state, counters). Its failures are its own to log. */
  record?(run: HookRun, j: Judgement<W, F>, acted: Omit<Acted, 'durationMs'>): Promise<void>;
  /** The report printed before the summary line (the judgement may be a thrown error's, with no findings). */
  render?(run: HookRun, j: Judgement<W, F>, d: Decision): readonly string[];
  /** A verdict this run does not act on, handed back to the caller untouched (the agent answers only healthy). */
  handBack?(run: HookRun, j: Judgement<W, F>, d: Decision): string | null;
  /**
   * The agent's answer: the summary line, given as soon as the run is decided and `record`ed, before `later` and
   * the run's log line, which nobody waits for. False: nobody took it (the Prolog stopped waiting and judges
   * itself), and `later` and the log line are left to that run.
   */
  deliver?(summary: string): boolean;
  /** What the hook keeps that the Prolog need not wait for (the job's record, pcie-aer's reference): after `record` and `deliver`. */
  later?(run: HookRun, j: Judgement<W, F>, acted: Omit<Acted, 'durationMs'>): Promise<void>;
  /** Instead of `later` when nobody took the answer: what `record` began is undone. */
  undelivered?(run: HookRun, j: Judgement<W, F>): Promise<void>;
}

/** A hook that acts on every verdict (all but the agent's). */
export type ActingHook<W, F extends AnyFinding = AnyFinding> = Omit<HookSpec<W, F>, 'handBack'>;

/** A run carried through: its exit code, its report and summary line (the caller prints them), what it judged and did. */
export interface HookDone<W, F extends AnyFinding = AnyFinding> {
  readonly handedBack: false;
  readonly code: number;
  readonly report: readonly string[];
  /** Null where stdout is not ours (the TaskProlog). */
  readonly summary: string | null;
  readonly judgement: Judgement<W, F>;
  readonly acted: Acted;
  /** False when `deliver` found nobody to take the answer. */
  readonly delivered: boolean;
}

export type HookResult<W, F extends AnyFinding = AnyFinding> = HookDone<W, F> | { readonly handedBack: true; readonly why: string };

async function readConfig(rules: ModeRules, file: string): Promise<{ cfg: Config | null; err: unknown }> {
  if (rules.config === 'optional') return { cfg: await loadConfig(file).catch(() => null), err: null };
  try {
    const cfg = await loadTrustedConfig(file);
    setLogFile(cfg.logFile);
    return { cfg, err: null };
  } catch (e) {
    return { cfg: null, err: e };
  }
}

function counts(findings: readonly AnyFinding[]): Record<Status, number> {
  const c: Record<Status, number> = { pass: 0, warn: 0, fail: 0, skip: 0, error: 0 };
  for (const f of findings) c[f.status]++;
  return c;
}

/** Drains (or, for health, resumes) as the decision says; the action's words and the exit code. */
async function act(run: HookRun, rules: ModeRules, j: Judgement<unknown, AnyFinding>, d: Decision, rejudge: () => Promise<Outcome>): Promise<{ reason: string | null; action: string; code: number }> {
  const { cfg, node, dryRun } = run;
  const scontrol = (): Scontrol =>
    // scontrol shares the run's hard deadline (NHC's most reported hang), kill grace included.
    new Scontrol(run.exec, { path: cfg?.scontrol ?? DEFAULTS.scontrol, timeoutMs: cfg?.scontrolTimeoutMs ?? DEFAULTS.scontrolTimeoutMs, deadline: run.deadline.at - EXEC_GRACE_MS });
  if (d.drain) {
    const base = reasonFor(j.outcome, run.job ?? undefined);
    const reason = j.markReason ? j.markReason(base) : base;
    if (dryRun) return { reason, action: 'dry-run: would drain', code: d.exitCode };
    const r = await drainOwned(scontrol(), node, reason, cfg?.stateDir ?? DEFAULTS.stateDir, cfg?.spool ?? DEFAULTS.spool);
    if (r.action === 'drained') tellDrained(); // the Prolog fails now, whatever ends this run
    return { reason, action: r.action, code: rules.exitOnlyAfterOwnDrain ? exitCode(r.ours ? 'unhealthy' : 'ok') : d.exitCode };
  }
  if (rules.resumes && j.outcome.kind === 'healthy' && (cfg?.resumeWhenHealthy ?? true) && !dryRun) {
    // Judged healthy: resume a drain of ours, if this run judged what it was for. That judgement may have begun before
    // the drain was written (a Prolog's, on a link that went bad meanwhile): the node is judged once more after the
    // drain is read, and only the very reason read is resumed (resumeOwned's re-check). Only with a drain of ours.
    let left: string | null = null;
    const r = await resumeOwned(scontrol(), node, { refuse: (reason) => (left = healthLeaves(reason, j.judged ?? [], cfg?.spool ?? DEFAULTS.spool, node) ?? notToldNow(reason, j.findings)), recheck: rejudge, stateDir: cfg?.stateDir ?? DEFAULTS.stateDir });
    if (r.result === 'internal' && !r.tried && !r.rechecked) (await log()).error({ node, why: r.why }, 'cannot read node state; not resuming');
    return { reason: null, action: r.resumed ? 'resumed' : r.tried ? `resume failed: ${r.why}` : (left ?? (r.result === 'ok' && !r.rechecked ? 'none' : r.why)), code: d.exitCode };
  }
  return { reason: null, action: 'none', code: d.exitCode };
}

/** One run of a Slurm hook: judged, decided, acted on, recorded, logged and summed up once. */
export async function runHook<W, F extends AnyFinding>(spec: HookSpec<W, F> & Required<Pick<HookSpec<W, F>, 'handBack'>>): Promise<HookResult<W, F>>;
export async function runHook<W, F extends AnyFinding>(spec: ActingHook<W, F>): Promise<HookDone<W, F>>;
export async function runHook<W, F extends AnyFinding>(spec: HookSpec<W, F>): Promise<HookResult<W, F>> {
  const started = performance.now();
  const rules = MODES[spec.mode];
  const file = configPath(spec.config);
  const { cfg, err } = await readConfig(rules, file);
  const startup = spec.startup ?? 'modules';
  // The agent judges for a Prolog already running: from the question's arrival. Without a config: from now.
  const origin = cfg && rules.origin === 'run' && startup !== 'agent' ? runOrigin(spec.env) : started;
  const deadline = new Deadline((cfg?.deadlineMs ?? DEFAULTS.deadlineMs) + rules.budgetMs(cfg), origin);
  const run: HookRun = {
    mode: spec.mode,
    env: spec.env,
    started,
    node: nodeName(spec.env),
    job: spec.job !== undefined ? spec.job : spec.env.SLURM_JOB_ID,
    file,
    cfg,
    cfgError: err === null ? null : err instanceof Error ? err.message : String(err),
    dryRun: spec.dryRun ?? false,
    startup,
    selfPid: spec.selfPid,
    deadline,
    exec: spec.exec ?? new ExecaExec(),
  };
  let j: Judgement<W, F>;
  try {
    j = await spec.judge(run);
  } catch (e) {
    // Only a hook that may drain has a fail-open policy; the others' errors are the top-level catch's (exit 2 or 3).
    if (rules.config === 'optional') throw e;
    j = { outcome: toOutcome(e), findings: [], work: null };
  }
  if (err !== null) j = { ...j, outcome: toOutcome(err) };
  const drain = rules.drains;
  const policy: PolicyOptions = cfg ? { onConfigError: cfg.onConfigError, onInternalError: cfg.onInternalError, drain } : rules.config === 'trusted' ? { ...(await fallbackPolicy(file)), drain } : { onConfigError: DEFAULTS.onConfigError, onInternalError: DEFAULTS.onInternalError, drain };
  const decision = decide(spec.mode, j.outcome, policy);
  const back = spec.handBack?.(run, j, decision) ?? null;
  if (back !== null) return { handedBack: true, why: back };
  // From here the verdict is decided: an error in acting on it, keeping it or saying it is the tool's, logged, and
  // never changes the exit code (an exception that reached the top would be exit 3, which the wrappers fail open on).
  const rejudge = (): Promise<Outcome> => spec.judge(run).then((x) => x.outcome, toOutcome);
  const { reason, action, code } = await act(run, rules, j, decision, rejudge).catch((e: unknown) => {
    void afterwards('act', e);
    const what = decision.drain ? 'drain' : 'resume';
    return { reason: null, action: `${what} failed: internal error: ${message(e)}`, code: decision.drain && rules.exitOnlyAfterOwnDrain ? exitCode('ok') : decision.exitCode };
  });
  const acted0 = { decision, code, reason, action };
  if (spec.record) await spec.record(run, j, acted0).catch((e: unknown) => afterwards('record', e));
  const { node, job } = run;
  if (!run.dryRun && run.cfg?.probes && (action === 'drained' || action === 'resumed')) await (await import('../epilog/window.js')).restartWindow(run.cfg.spool, `${action}: ${reason ?? j.outcome.kind}`, node);
  const durationMs = Math.round(performance.now() - started);
  const head = `gdrgate ${spec.mode} node=${node}${job ? ` job=${job}` : ''}${j.detail ?? ''}`;
  const tail = j.brief ? '' : ` result=${j.outcome.kind} exit=${code} ${durationMs}ms${reason ? ` reason="${reason}"` : ''} action=${action}`;
  const summary = rules.summary ? escapeControls(head + tail) : null;
  const delivered = spec.deliver && summary !== null ? spec.deliver(summary) : true;
  if (!delivered && spec.undelivered) await spec.undelivered(run, j).catch((e: unknown) => afterwards('undelivered', e));
  if (delivered) {
    // What follows the answer (the job's record) is timed apart: durationMs is the time to the verdict the caller saw.
    const after = performance.now();
    if (spec.later) await spec.later(run, j, acted0).catch((e: unknown) => afterwards('later', e));
    const afterMs = spec.later ? { afterMs: Math.round(performance.now() - after) } : {};
    if (rules.log) await logRun(run, rules.log, spec.env, j, decision, { code, reason, action, durationMs, ...afterMs }).catch((e: unknown) => afterwards('log', e));
  }
  const report = rendered(spec, run, j, decision);
  if (!j.brief && (j.outcome.kind === 'config-error' || j.outcome.kind === 'internal-error')) report.push(escapeControls(`${j.outcome.kind}: ${j.outcome.message}`));
  return { handedBack: false, code, report, summary, judgement: j, acted: { ...acted0, durationMs }, delivered };
}

/** The run's one log line (and, failed open, the error line before it). */
async function logRun(run: HookRun, l: NonNullable<ModeRules['log']>, env: NodeJS.ProcessEnv, j: Judgement<unknown, AnyFinding>, decision: Decision, a: Omit<Acted, 'decision'> & { readonly afterMs?: number }): Promise<void> {
  const logger = await log();
  const { node, job, startup } = run;
  if (decision.failedOpen) logger.error({ node, job, outcome: j.outcome }, l.failOpenMsg);
  if (j.brief) return;
  // The wrapper asked the agent first and got no healthy answer: why, on the run line (the agent never drains).
  const agentSaid = startup !== 'agent' ? env.GDRGATE_AGENT_SAID : undefined;
  const fields = {
    mode: run.mode,
    node,
    job,
    durationMs: a.durationMs,
    ...(a.afterMs !== undefined ? { afterMs: a.afterMs } : {}),
    // How the gate started (the agent adds the Prolog's pid as `client`; the wrapper, the agent's answer as `agent`).
    ...(l.gate ? { startup, ...(agentSaid ? { agent: agentSaid } : {}), ...(run.selfPid !== undefined ? { client: run.selfPid } : {}) } : {}),
    ...j.logged?.head,
    result: j.outcome.kind,
    exitCode: a.code,
    ...(l.gate ? { failedOpen: decision.failedOpen } : {}),
    reason: a.reason,
    action: a.action,
    summary: j.logged?.summary ?? counts(j.findings),
    ...j.logged?.tail,
  };
  logger[l.levelByExit && a.code !== 0 ? 'warn' : 'info'](fields, l.msg);
}
