// `gdrgate prolog` and `gdrgate health`: the gate Slurm runs. The judgement is the engine's (engine/prolog.ts);
// here: the owned drain (or health's resume), the per-job state of a passing Prolog, the report, the exit code.
import { DEFAULTS } from '../config.js';
import { judge, logRun, recordAer, recordState, summaryLine, type GateArgs, type GateContext, type Startup } from '../engine/prolog.js';
import { EXEC_GRACE_MS, ExecaExec, type Exec } from '../host/exec.js';
import { log } from '../log.js';
import { buildReport } from '../report/report.js';
import { renderText } from '../report/text.js';
import { drainOwned, reasonFor, resumeOwned } from '../slurm/drain.js';
import { Scontrol } from '../slurm/scontrol.js';
import { out } from './common.js';

export type { GateArgs, Startup };

export async function gateCommand(a: GateArgs, exec: Exec = new ExecaExec(), startup: Startup = 'modules'): Promise<number> {
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
  if (blobFailed) logger.warn({ node, job, blobExit: Number(blobFailed) }, 'dist/gate.blob could not be used by this Node; the gate ran without its startup snapshot. Remake it: node <gdrgate>/scripts/build-blob.mjs');
  // The wrapper asked the agent first and got no healthy answer: why, on the run line (the agent never drains: README, Agent).
  await logRun(a, j, ctx, durationMs, { reason, action, agent: ctx.env.GDRGATE_AGENT_SAID });
  if (outcome.kind !== 'healthy' || a.dryRun) {
    const report = buildReport({ command: a.mode, inv: null, root: a.root ?? cfg?.root ?? '/', findings: j.findings, outcome, decision, started, baseline: j.cls ? { file: a.baseline ?? cfg!.baseline, class: j.cls } : null });
    out(renderText(report).trimEnd());
    if (outcome.kind === 'config-error' || outcome.kind === 'internal-error') out(`${outcome.kind}: ${outcome.message}`);
  }
  out(summaryLine(a, j, durationMs, reason, action));
  return decision.exitCode;
}
