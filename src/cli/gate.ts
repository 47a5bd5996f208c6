// `gdrgate prolog` and `gdrgate health`: the gate Slurm runs. The judgement is the engine's (engine/prolog.ts);
// here: the owned drain (or health's resume), the per-job state of a passing Prolog, the report, the exit code.
import { DEFAULTS } from '../config.js';
import { judge, logRun, recordAer, recordState, summaryLine, type GateArgs, type GateContext, type Startup } from '../engine/prolog.js';
import { EXEC_GRACE_MS, ExecaExec, type Exec } from '../host/exec.js';
import { log } from '../log.js';
import { buildReport } from '../report/report.js';
import { escapeControls } from '../report/escape.js';
import { renderText } from '../report/text.js';
import { drainOwned, reasonFor, resumeOwned } from '../slurm/drain.js';
import { Scontrol } from '../slurm/scontrol.js';
import { exitCode } from '../runner/exit.js';
import { out } from './common.js';

export type { GateArgs, Startup };

/** The wrapper's GDRGATE_BLOB_FAILED (slurm/prolog.sh) in words: why this run did not start from the startup snapshot. */
export function blobFailedWhy(v: string): string {
  const why =
    v === 'untrusted' ? 'it, or a directory above it, is not root\'s alone'
    : v === '10' ? 'it is stale: the program changed since it was made'
    : v === '14' ? 'this Node refused it: made by another Node build, with other V8 flags or on another CPU'
    : `Node exited ${v} starting from it (a damaged file?)`;
  return `the startup snapshot could not be used (${why}); the gate ran without it. Remake it as root: gdrgate startup-snapshot`;
}

/** The gate's arguments as typed: `--outside-slurm` lets a prolog run (and drain) where Slurm did not start it. */
export interface GateCliArgs extends GateArgs {
  readonly outsideSlurm?: boolean | undefined;
}

/**
 * Why this prolog must not run, or null. slurmd starts the Prolog with SLURM_JOB_ID and, since 20.11,
 * SLURM_SCRIPT_CONTEXT=prolog_slurmd (src/plugins/prep/script/prep_script_slurmd.c); a shell on the node has
 * neither, and a prolog typed there would judge the node and could drain it. The HealthCheckProgram gets neither
 * (slurmd.c run_script_health_check: SLURMD_NODENAME only) and runs outside any job: health stays allowed.
 */
export function refusedOutsideSlurm(a: GateCliArgs, env: NodeJS.ProcessEnv): string | null {
  if (a.mode !== 'prolog' || a.dryRun || a.outsideSlurm) return null;
  if (env.SLURM_JOB_ID || env.SLURM_SCRIPT_CONTEXT === 'prolog_slurmd') return null;
  return 'prolog: not started by slurmd (neither SLURM_JOB_ID nor SLURM_SCRIPT_CONTEXT=prolog_slurmd is set), and a prolog may drain this node. By hand: `gdrgate check` to look, `gdrgate prolog --dry-run` to see what the gate would do, `gdrgate prolog --outside-slurm` to run it as a Prolog anyway';
}

export async function gateCommand(a: GateCliArgs, exec: Exec = new ExecaExec(), startup: Startup = 'modules'): Promise<number> {
  const refused = refusedOutsideSlurm(a, process.env);
  if (refused) {
    // Said here and answered with the usage exit code, before anything is read.
    process.stderr.write(`gdrgate: ${refused}\n`);
    return exitCode('usage');
  }
  const ctx: GateContext = { env: process.env, startup };
  const j = await judge(a, ctx);
  const { started, node, job, cfg, outcome, decision } = j;
  const logger = await log();
  const scontrol = new Scontrol(exec, {
    path: cfg?.scontrol ?? DEFAULTS.scontrol,
    timeoutMs: cfg?.scontrolTimeoutMs ?? DEFAULTS.scontrolTimeoutMs,
    // scontrol shares the run's hard deadline (it is NHC's most reported hang); kill grace included.
    deadline: (j.deadlineAt ?? started + (cfg?.deadlineMs ?? DEFAULTS.deadlineMs)) - EXEC_GRACE_MS,
  });
  let action = 'none';
  let reason: string | null = null;
  if (decision.drain) {
    reason = reasonFor(outcome, job);
    if (j.drill) reason = j.drill.mark(reason);
    if (a.dryRun) action = 'dry-run: would drain';
    else action = (await drainOwned(scontrol, node, reason, cfg?.stateDir ?? DEFAULTS.stateDir)).action;
  } else if (a.mode === 'health' && outcome.kind === 'healthy' && (cfg?.resumeWhenHealthy ?? true) && !a.dryRun) {
    // Just judged healthy: resume a drain of ours without judging twice.
    const r = await resumeOwned(scontrol, node);
    if (r.resumed) action = 'resumed';
    else if (r.tried) action = `resume failed: ${r.why}`;
  }
  if (a.mode === 'prolog' && !a.dryRun && outcome.kind === 'healthy') await recordState(j, ctx);
  // Prolog and health both move pcie-aer's reference (the health check judged growth up to now, as a Prolog does).
  if (!a.dryRun) await recordAer(j, ctx, a.mode);
  if (decision.failedOpen) logger.error({ node, job, outcome }, 'gdrgate could not judge this node; letting the job run (fail-open)');
  const durationMs = Math.round(performance.now() - started);
  // The wrapper could not start the gate from its blob (another Node's, or damaged) and ran it without: say so once a run.
  const blobFailed = startup === 'modules' ? ctx.env.GDRGATE_BLOB_FAILED : undefined;
  if (blobFailed) logger.warn({ node, job, blobExit: blobFailed }, blobFailedWhy(blobFailed));
  // The wrapper asked the agent first and got no healthy answer: why, on the run line (the agent never drains: README, Agent).
  await logRun(a, j, ctx, durationMs, { reason, action, agent: ctx.env.GDRGATE_AGENT_SAID });
  if (outcome.kind !== 'healthy' || a.dryRun) {
    const report = buildReport({ command: a.mode, inv: null, root: a.root ?? cfg?.root ?? '/', findings: j.findings, outcome, decision, started, baseline: j.cls ? { file: a.baseline ?? cfg!.baseline, class: j.cls } : null });
    out(renderText(report).trimEnd());
    if (outcome.kind === 'config-error' || outcome.kind === 'internal-error') out(escapeControls(`${outcome.kind}: ${outcome.message}`));
  }
  out(escapeControls(summaryLine(a, j, durationMs, reason, action)));
  return decision.exitCode;
}
