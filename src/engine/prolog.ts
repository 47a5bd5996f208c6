// The Slurm gate's judge and record (prolog and health), for the hook life cycle (engine/hook.ts) that both the
// gate's own process (cli/gate.ts) and the agent (agent/serve.ts) run: the node through the engine under the hard
// deadline; a passing Prolog's per-job state and pcie-aer's reference.
import { trustedFiles, type Config } from '../config.js';
import type { ActiveDrill } from '../drill/hook.js';
import { drillFile } from '../drill/path.js';
import { exists } from '../host/entries.js';
import type { Host } from '../host/host.js';
import { log } from '../log.js';
import type { Finding } from '../model/finding.js';
import type { Inventory } from '../model/inventory.js';
import { buildReport } from '../report/report.js';
import { renderText } from '../report/text.js';
import { withDeadline } from '../runner/deadline.js';
import { selectChecks } from '../runner/run.js';
import { readLastAer } from '../state/aer.js';
import { parseJobId } from '../state/names.js';
import type { Begun } from '../state/prolog.js';
import { aerReferenceOf } from '../checks/aer-judge.js';
import { GATE_SOURCES, REASON_LABELS } from '../checks/index.js';
import { evaluateNode } from './evaluate.js';
import { runHook, type ActingHook, type HookRun, type HookSpec, type Judgement, type Startup } from './hook.js';

export type { Startup };

export interface GateArgs {
  readonly mode: 'prolog' | 'health';
  readonly config?: string | undefined;
  readonly root?: string | undefined;
  readonly baseline?: string | undefined;
  readonly dryRun: boolean;
}

/** Whom the gate judges for: this process, or (gdrgate agent) the Prolog that asked, by its environment and pid. */
export interface GateContext {
  readonly env: NodeJS.ProcessEnv;
  readonly startup: Startup;
  /** The pid of the Prolog the agent answers (its limits, its place under slurmd); absent: this process. */
  readonly selfPid?: number;
  /** The agent's: gives the job its TaskProlog FIFO once its record is written (before the job's user has it), by the mount table the record was written by. */
  readonly handOver?: (env: NodeJS.ProcessEnv, mounts: readonly string[]) => void;
  /** The agent's: a Host over the opened one that takes config reads its worker made ahead (host/read-ahead.ts). */
  readonly readAhead?: (h: Host) => Host;
}

/** What the Prolog saw, for the per-job state the TaskProlog compares with. */
export interface Seen {
  readonly host: Host;
  readonly inv: Inventory;
  readonly memlockMin: number | 'unlimited';
  /** The class hands jobs the node's NCCL topology file (baseline ncclTopo). */
  readonly ncclTopo?: boolean;
}

/** What the gate's record and report need of its judgement. */
export interface GateWork {
  readonly seen: Seen;
  /** The baseline class the node was judged by. */
  readonly cls: string;
  /** gdrgate drill: the staged fault the Host answered with (its marker ends the drain reason); never recorded. */
  readonly drill: ActiveDrill | null;
  /** When the judgement began reading the node: the time of pcie-aer's reference it records. */
  readonly read: Date;
}

type GateJudgement = Judgement<GateWork, Finding>;

async function evaluate(run: HookRun, cfg: Config, a: GateArgs, readAhead?: (h: Host) => Host): Promise<GateJudgement> {
  const baseline = a.baseline ?? cfg.baseline;
  // Drill mode (gdrgate drill): one stat of the drill file on the pass path; the overlay loads only when one is there.
  const drill = exists(drillFile(cfg.stateDir)) ? await (await import('../drill/hook.js')).activeDrill(cfg.stateDir, run.node) : null;
  const checks = selectChecks(cfg.checks);
  const read = new Date();
  const ev = await evaluateNode({
    root: a.root ?? cfg.root,
    baseline,
    node: run.node,
    trust: trustedFiles(cfg, baseline),
    pidFiles: cfg.slurmdPidFiles,
    gresConf: cfg.gresConf,
    env: run.env,
    selfPid: run.selfPid,
    // The drill's overlay over the read-ahead's: a staged fault answers before anything read.
    wrap: readAhead && drill ? (h: Host) => drill.wrap(readAhead(h)) : (drill?.wrap ?? readAhead),
    checks,
    deadline: run.deadline,
    // pcie-aer's growth: against the previous run's counters (one small state file; missing or corrupt: none known).
    aerHistory: readLastAer(cfg.stateDir),
  });
  const cls = ev.baseline!.cls;
  const seen: Seen = { host: ev.host, inv: ev.inv, memlockMin: cls.memlockMin, ncclTopo: cls.ncclTopo === true };
  // What a health check that passes may resume: the drains of the checks it ran, and of the gate's own config and
  // internal errors (it has just read the config and judged without error); never the Epilog's bw-* or a drill's.
  const judged = [...checks.map((id) => REASON_LABELS[id]), ...GATE_SOURCES.map((g) => REASON_LABELS[g])];
  return { outcome: ev.outcome, findings: ev.findings, work: { seen, cls: cls.name, drill, read }, judged, ...(drill ? { markReason: (r: string) => drill.mark(r) } : {}) };
}

/** A passing Prolog's judgement (not a dry run): its job gets a state. */
const passed = (run: HookRun, j: GateJudgement): boolean => !!run.cfg && !!j.work && !run.dryRun && run.mode === 'prolog' && j.outcome.kind === 'healthy';

/** A passing Prolog's per-job state, for the TaskProlog (gdrgate task): a failure is logged, never the exit code. */
async function recordState(run: HookRun, cfg: Config, seen: Seen, begun: Begun | null, handOver?: GateContext['handOver']): Promise<void> {
  const st = await import('../state/prolog.js').then(
    (m) => m.recordJobState({ stateDir: cfg.stateDir, env: run.env, node: run.node, ...seen, begun, ...(handOver ? { handOver: (mounts: readonly string[]) => handOver(run.env, mounts) } : {}) }),
    (e: Error) => ({ ok: false, level: 'error', why: e.message }) as const,
  );
  const job = run.job ?? undefined;
  if (!st.ok && st.level !== 'skip') (await log())[st.level]({ node: run.node, job, why: st.why }, 'per-job state not written; the TaskProlog will report it missing');
  if (st.ok && st.ncclTopoWhy) (await log()).warn({ node: run.node, job, why: st.ncclTopoWhy }, 'NCCL topology file not written; the job gets none');
}

/**
 * pcie-aer's reference (docs/limits-and-state.md, "AER reference"): the counters this judgement read become the one
 * the next run compares with, so every correctable error is judged once. Written by the run whose judgement stands:
 * the gate's own Prolog and health check, pass or fail (a drain judged the growth up to now; the next run judges only
 * what comes after); the agent's only when it answers. A Prolog's also goes under the job's name, for its Epilog.
 * Never a drill's staged counters, never a dry run's. A failure is logged, never the exit code.
 */
async function recordAer(run: HookRun, cfg: Config, w: GateWork): Promise<void> {
  // A drill's staged counters are not the node's: they must not become the next run's reference.
  if (w.drill) return;
  // Stamped when the counters began to be read, not when written: a run that read them later and recorded them first
  // keeps its reference (aer-write.ts), so the errors between the two reads are judged once.
  const ref = aerReferenceOf(w.seen.inv, w.read, run.mode === 'prolog' ? parseJobId(run.env.SLURM_JOB_ID) : null);
  try {
    (await import('../state/aer-write.js')).writeAer(cfg.stateDir, ref);
  } catch (e) {
    (await log()).error({ node: run.node, job: run.job ?? undefined, why: (e as Error).message }, 'AER counters not recorded; the next run knows no growth');
  }
}

/**
 * The wrapper's GDRGATE_BLOB_FAILED and GDRGATE_BLOB (slurm/prolog.sh) in words: why this run did not start from the
 * startup snapshot, and which file that is.
 */
export function blobFailedWhy(v: string, blob?: string): string {
  const why =
    v === 'untrusted' ? 'it, or a directory above it, is not root\'s alone'
    : v === 'missing' ? 'there is none: it was never made, or removed'
    : v === 'notafile' ? 'it is not a regular file'
    : v === '11' ? 'it is cut short, or was not sealed by gdrgate startup-snapshot'
    : v === '10' ? 'it is stale: the program changed since it was made, or it is of another program than CLI'
    : v === '14' ? 'this Node refused it: made by another Node build or with other V8 flags'
    : `Node exited ${v} starting from it (a damaged file?)`;
  return `the startup snapshot${blob ? ` ${blob}` : ''} could not be used (${why}); the gate ran without it. Remake it as root: gdrgate startup-snapshot`;
}

/**
 * The Slurm gate as a hook: prolog or health, in its own process or (ctx.startup 'agent') in the agent. Judges the
 * node under the deadline (nothing to judge without a config: the config error is the outcome); records a passing
 * Prolog's job state and, unless a dry run, pcie-aer's reference; reports when the node is not healthy or on a dry run.
 */
export function gateHook(a: GateArgs, ctx: GateContext): ActingHook<GateWork, Finding> {
  // The job's directory as this run began it before the answer (record), written into after it (later).
  let begun: Begun | null = null;
  return {
    mode: a.mode,
    env: ctx.env,
    config: a.config,
    dryRun: a.dryRun,
    startup: ctx.startup,
    selfPid: ctx.selfPid,
    judge: async (run) => (run.cfg ? withDeadline(evaluate(run, run.cfg, a, ctx.readAhead), run.deadline) : { outcome: { kind: 'healthy' }, findings: [], work: null }),
    record: async (run, j) => {
      // Before the answer, an earlier attempt's job state goes and the job's directory is begun; this run's record is
      // written into it after the answer (later), off the Prolog's path: a task that comes first waits for it.
      if (passed(run, j)) begun = await import('../state/prolog.js').then((m) => m.beginJobState(run.cfg!.stateDir, run.env), () => null);
    },
    // An answer nobody took: the directory begun goes (its Prolog judges and records in its own process).
    undelivered: async (run) => {
      const job = parseJobId(run.env.SLURM_JOB_ID);
      if (begun && job !== null && run.cfg) (await import('../state/prolog.js')).dropBegun(run.cfg.stateDir, job, begun);
    },
    later: async (run, j) => {
      // The job's state first: its TaskProlog, started once the Prolog has ended, waits for it.
      if (passed(run, j)) await recordState(run, run.cfg!, j.work!.seen, begun, ctx.handOver);
      // Prolog and health both move pcie-aer's reference (the health check judged growth up to now, as a Prolog does).
      if (run.cfg && j.work && !run.dryRun) await recordAer(run, run.cfg, j.work);
      // The wrapper could not start the gate from its blob (another Node's, or damaged) and ran it without: said once a run.
      const blobFailed = run.startup === 'modules' ? run.env.GDRGATE_BLOB_FAILED : undefined;
      if (blobFailed) {
        const blob = run.env.GDRGATE_BLOB || undefined;
        (await log()).warn({ node: run.node, job: run.job ?? undefined, blobExit: blobFailed, blob }, blobFailedWhy(blobFailed, blob));
      }
    },
    render: (run, j, decision) => {
      if (j.outcome.kind === 'healthy' && !run.dryRun) return [];
      const baseline = j.work ? { file: a.baseline ?? run.cfg!.baseline, class: j.work.cls } : null;
      return [renderText(buildReport({ command: a.mode, inv: null, root: a.root ?? run.cfg?.root ?? '/', findings: j.findings, outcome: j.outcome, decision, started: run.started, baseline })).trimEnd()];
    },
  };
}

export type AgentAnswer = { readonly healthy: true; readonly delivered: boolean } | { readonly healthy: false; readonly why: string };

/**
 * The agent's half of a Prolog (gdrgate agent): the same hook as the gate's, for the Prolog described by `ctx`;
 * `waiting()` says whether that Prolog still waits for the answer, `deliver` hands it the summary line.
 * Only a healthy node is answered here: an earlier attempt's job state cleared, the line delivered, then the job's
 * state, pcie-aer's reference and the run's log line, which the Prolog does not wait for. Anything else, fail-open included, is handed back: the Prolog
 * then runs the gate in its own process, which judges again and is the only one that drains.
 */
export async function agentProlog(config: string, ctx: GateContext, waiting: () => boolean, deliver: (line: string) => boolean): Promise<AgentAnswer> {
  const handBack: NonNullable<HookSpec<GateWork, Finding>['handBack']> = (_run, j, d) => {
    const o = j.outcome;
    if (o.kind !== 'healthy' || d.drain || d.exitCode !== 0) return o.kind === 'unhealthy' ? `unhealthy: ${o.failing.length} failing finding(s)` : o.kind === 'healthy' ? 'not a plain pass' : `${o.kind}: ${o.message}`;
    // A Prolog that gave up waiting has judged the job itself: write no state and log no run on its behalf.
    return waiting() ? null : 'the Prolog stopped waiting';
  };
  const r = await runHook({ ...gateHook({ mode: 'prolog', config, dryRun: false }, ctx), handBack, deliver });
  return r.handedBack ? { healthy: false, why: r.why } : { healthy: true, delivered: r.delivered };
}
