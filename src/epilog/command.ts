// The Slurm Epilog's run (gdrgate epilog; the CLI prints what it returns). Cleans the job's per-job state
// (epilog/job-state.ts), then, when the config has `probes` and the sampling policy says so, probes bandwidth and
// judges it. Exit 1 only after our own drain: a non-zero Epilog otherwise drains the node with Slurm's "Epilog
// error" (DESIGN §5).
import { configPath, DEFAULTS, fallbackPolicy, loadTrustedConfig, type Config } from '../config.js';
import { readStamp } from './files.js';
import type { BwFinding } from './finding.js';
import { samplingDecision } from './policy.js';
import { renderBw } from './render.js';
import { recordTaskFindings } from './task-counts.js';
import type { EpilogProbeResult } from './run.js';
import { EXEC_GRACE_MS, ExecaExec, type Exec } from '../host/exec.js';
import { log, setLogFile } from '../log.js';
import { exitCode } from '../runner/exit.js';
import { decide, toOutcome, type Outcome, type PolicyOptions } from '../runner/policy.js';
import { UsageError } from '../errors.js';
import { bandwidthReason } from '../slurm/reason.js';
import { Scontrol } from '../slurm/scontrol.js';
import { parseJobId } from '../state/names.js';
import { nodeName } from '../engine/node.js';
import { epilogJobState } from './job-state.js';
import { existsSync } from 'node:fs';
import { aerJobFile } from '../state/aer.js';
import type { EpilogAer } from './aer.js';

/** The summary line's part: ` aer=ok`, ` aer=warn:2`, ` aer=fail:1`; nothing when not judged. */
function aerLine(r: EpilogAer | null): string {
  if (r === null || !r.judged) return '';
  if (r.failing.length) return ` aer=fail:${r.failing.length}`;
  return r.findings.length ? ` aer=warn:${r.findings.length}` : ' aer=ok';
}
import { drainOwned, reasonFor } from '../slurm/drain.js';
import { Deadline, withDeadline } from '../runner/deadline.js';

export interface EpilogArgs {
  readonly config?: string | undefined;
  /** Probe now whatever the sampling policy says; no spool, stamp, textfile, state cleanup or drain. */
  readonly dryRun?: boolean | undefined;
}

/** The per-job state part of the summary line (format kept from the state-only epilog). */
function stateLine(o: Awaited<ReturnType<typeof epilogJobState>>): string {
  const findings = o.task ? o.task.findings.filter((f) => f.status === 'fail' || f.status === 'error').map((f) => f.code) : [];
  return ` view=${o.task ? o.task.state : 'none'}${findings.length ? ` findings=${findings.join(',')}` : ''} removed=${o.removed}${o.error ? ' error' : ''}`;
}

export interface EpilogRun {
  readonly code: number;
  /** The report, in order: what a human or slurmd's log reads. */
  readonly text: readonly string[];
}

export async function runEpilog(a: EpilogArgs, env: NodeJS.ProcessEnv = process.env, exec: Exec = new ExecaExec()): Promise<EpilogRun> {
  const started = performance.now();
  const dryRun = a.dryRun ?? false;
  const job = parseJobId(env.SLURM_JOB_ID);
  if (job === null && !dryRun) throw new UsageError('not in a Slurm Epilog (SLURM_JOB_ID unset or malformed)');
  const node = nodeName(env);
  const file = configPath(a.config);
  let cfg: Config | null = null;
  let cfgErr: unknown = null;
  try {
    cfg = await loadTrustedConfig(file);
    setLogFile(cfg.logFile);
  } catch (e) {
    cfgErr = e;
  }
  const logger = await log();
  if (cfgErr) logger.error({ job, node, why: (cfgErr as Error).message, stateDir: DEFAULTS.stateDir }, 'epilog: config unreadable; cleaning the default state directory');
  let line = `gdrgate epilog node=${node}${job ? ` job=${job}` : ''}`;
  // pcie-aer: correctable growth during the job, against what the job's Prolog recorded (only when it recorded).
  let aer: EpilogAer | null = null;
  // One lstat when the job's Prolog recorded nothing: the engine's modules load only when there is something to judge.
  if (job !== null && !dryRun && cfg && existsSync(`${cfg.stateDir}/${aerJobFile(job)}`)) {
    try {
      aer = await (await import('./aer.js')).epilogAer(cfg, node, job);
      if (aer.judged && aer.findings.length) logger.warn({ job, node, findings: aer.findings }, 'epilog: PCIe AER errors during the job');
      else if (!aer.judged) logger.info({ job, node, why: aer.why }, 'epilog: AER growth not judged');
    } catch (e) {
      logger.error({ job, node, why: (e as Error).message }, 'epilog: AER counters could not be judged');
    }
  }
  // Whether the job ran with gdrgate's NCCL_TOPO_FILE, from its TaskProlog's record; null when there is none.
  let ncclTopo: boolean | null = null;
  if (job !== null && !dryRun) {
    const st = await epilogJobState(cfg?.stateDir ?? DEFAULTS.stateDir, job, node);
    ncclTopo = st.task ? st.task.findings.some((f) => f.code === 'job-nccl-topo-set') : null;
    line += stateLine(st);
    // Counted for the admin's metrics (gdrgate_task_findings_total): a site-wide misconfiguration shows as a trend.
    const codes = st.task ? st.task.findings.filter((f) => f.status !== 'pass' && f.status !== 'skip').map((f) => f.code) : [];
    try {
      recordTaskFindings(cfg?.spool ?? DEFAULTS.spool, job, codes);
    } catch (e) {
      logger.error({ job, node, why: (e as Error).message }, 'epilog: could not count task findings');
    }
  }

  line += aerLine(aer);
  const aerFailing = aer?.judged ? aer.failing : [];
  const probes = cfg?.probes ?? null;
  if (cfgErr === null && probes === null && aerFailing.length === 0) return { code: exitCode('ok'), text: [line] };
  // Probing: the budget, then the gate's own deadline for the spool, the judgement and scontrol.
  const limitMs = (probes?.budgetMs ?? 0) + (cfg?.deadlineMs ?? DEFAULTS.deadlineMs);
  let outcome: Outcome = { kind: 'healthy' };
  let res: EpilogProbeResult | null = null;
  if (cfgErr) outcome = toOutcome(cfgErr);
  else if (probes !== null) {
    try {
      // Outside the sampling policy the epilog stops here: one small file read at most, no process spawned.
      const decision = samplingDecision(probes!.sampling, job, () => readStamp(cfg!.spool), Date.now());
      if (!decision.probe && !dryRun) res = { ran: false, why: decision.why };
      else {
        const { epilogProbes } = await import('../epilog/run.js');
        res = await withDeadline(epilogProbes({ cfg: cfg!, probes: probes!, node, job, dryRun, exec, decision, ncclTopo }), new Deadline(limitMs, started));
      }
    } catch (e) {
      outcome = toOutcome(e);
    }
  }
  const failing: BwFinding[] = res?.ran ? res.findings.filter((f) => f.status === 'fail') : [];
  // decide() reads only the kind; the bandwidth findings carry their own reason.
  if (failing.length) outcome = { kind: 'unhealthy', failing: [] };
  else if (aerFailing.length && outcome.kind === 'healthy') outcome = { kind: 'unhealthy', failing: aerFailing };
  const policy: PolicyOptions = cfg ? { onConfigError: cfg.onConfigError, onInternalError: cfg.onInternalError, drain: true } : { ...(await fallbackPolicy(file)), drain: true };
  const decision = decide('epilog', outcome, policy);
  let action = 'none';
  let reason: string | null = null;
  let code: number = decision.exitCode;
  if (decision.drain) {
    reason = failing.length ? bandwidthReason(failing, job ?? undefined) : reasonFor(outcome, job ?? undefined);
    if (dryRun) action = 'dry-run: would drain';
    else {
      const scontrol = new Scontrol(exec, { path: cfg?.scontrol ?? DEFAULTS.scontrol, timeoutMs: cfg?.scontrolTimeoutMs ?? DEFAULTS.scontrolTimeoutMs, deadline: started + limitMs - EXEC_GRACE_MS });
      const d = await drainOwned(scontrol, node, reason, cfg?.stateDir ?? DEFAULTS.stateDir);
      action = d.action;
      // Non-zero only after our own drain: otherwise Slurm drains with its bare "Epilog error" (DESIGN §5).
      code = exitCode(d.ours ? 'unhealthy' : 'ok');
    }
  }
  if (decision.failedOpen) logger.error({ node, job, outcome }, 'gdrgate epilog could not judge this node; not draining (fail-open)');
  const durationMs = Math.round(performance.now() - started);
  const probed = probes === null && cfgErr === null ? 'none' : res === null ? 'error' : res.ran ? `ran samples=${res.samples.length}` : 'skipped';
  const counts = res?.ran ? Object.fromEntries(['pass', 'warn', 'fail', 'skip', 'error'].map((s) => [s, res.findings.filter((f) => f.status === s).length])) : {};
  logger[code === 0 ? 'info' : 'warn'](
    { mode: 'epilog', node, job, durationMs, probeMs: res?.ran ? res.durationMs : null, probes: probed, why: res?.why ?? null, result: outcome.kind, exitCode: code, reason, action, summary: counts, findings: res?.ran ? res.findings.filter((f) => f.status !== 'pass') : [] },
    'gdrgate epilog',
  );
  const text: string[] = [];
  if (res?.ran && (dryRun || res.findings.some((f) => f.status !== 'pass'))) text.push(renderBw(res.findings));
  if (outcome.kind === 'config-error' || outcome.kind === 'internal-error') text.push(`${outcome.kind}: ${outcome.message}`);
  text.push(`${line} probes=${probed}${res && !res.ran ? ` (${res.why})` : ''} result=${outcome.kind} exit=${code} ${durationMs}ms${reason ? ` reason="${reason}"` : ''} action=${action}`);
  return { code, text };
}
