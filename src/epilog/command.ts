// The Slurm Epilog as a hook (engine/hook.ts runs its life cycle; gdrgate epilog prints what it returns). Judges:
// the job's per-job state (epilog/job-state.ts, then removed), pcie-aer's growth during the job, and, when the config
// has `probes` and the sampling policy says so, bandwidth. Records: the job view's findings, counted for the admin.
// Exit 1 only after our own drain: a non-zero Epilog otherwise drains the node with Slurm's "Epilog error" (DESIGN §5).
import { DEFAULTS } from '../config.js';
import { runHook, type ActingHook, type HookRun, type Judgement } from '../engine/hook.js';
import { UsageError } from '../errors.js';
import { exists } from '../host/entries.js';
import type { Exec } from '../host/exec.js';
import { log } from '../log.js';
import type { AnyFinding } from '../model/finding.js';
import { withDeadline } from '../runner/deadline.js';
import { toOutcome, type Outcome } from '../runner/policy.js';
import { aerJobFile } from '../state/aer.js';
import { parseJobId } from '../state/names.js';
import type { EpilogAer } from './aer.js';
import { readStamp } from './files.js';
import { epilogJobState } from './job-state.js';
import { samplingDecision } from './policy.js';
import { renderBw } from './render.js';
import type { EpilogProbeResult } from './run.js';
import { recordTaskFindings } from './task-counts.js';

export interface EpilogArgs {
  readonly config?: string | undefined;
  /** Probe now whatever the sampling policy says; no spool, stamp, textfile, state cleanup or drain. */
  readonly dryRun?: boolean | undefined;
}

export interface EpilogRun {
  readonly code: number;
  /** The report, in order: what a human or slurmd's log reads. */
  readonly text: readonly string[];
}

/** What the Epilog's record and report need: the probes' result, the job view's findings to count. */
interface EpilogWork {
  readonly res: EpilogProbeResult | null;
  readonly taskCodes: readonly string[] | null;
}

/** The summary line's part: ` aer=ok`, ` aer=warn:2`, ` aer=fail:1`; nothing when not judged. */
function aerLine(r: EpilogAer | null): string {
  if (r === null || !r.judged) return '';
  if (r.failing.length) return ` aer=fail:${r.failing.length}`;
  return r.findings.length ? ` aer=warn:${r.findings.length}` : ' aer=ok';
}

/** The per-job state part of the summary line (format kept from the state-only epilog). */
function stateLine(o: Awaited<ReturnType<typeof epilogJobState>>): string {
  const findings = o.task ? o.task.findings.filter((f) => f.status === 'fail' || f.status === 'error').map((f) => f.code) : [];
  return ` view=${o.task ? o.task.state : 'none'}${findings.length ? ` findings=${findings.join(',')}` : ''} removed=${o.removed}${o.error ? ' error' : ''}`;
}

/** pcie-aer: correctable growth during the job, against what the job's Prolog recorded (only when it recorded). */
async function judgeAer(run: HookRun, job: string | null): Promise<EpilogAer | null> {
  const { cfg, node } = run;
  // One lstat when the job's Prolog recorded nothing: the engine's modules load only when there is something to judge.
  if (job === null || run.dryRun || !cfg || !exists(`${cfg.stateDir}/${aerJobFile(job)}`)) return null;
  const logger = await log();
  try {
    const aer = await (await import('./aer.js')).epilogAer(cfg, node, job);
    if (aer.judged && aer.findings.length) logger.warn({ job, node, findings: aer.findings }, 'epilog: PCIe AER errors during the job');
    else if (!aer.judged) logger.info({ job, node, why: aer.why }, 'epilog: AER growth not judged');
    return aer;
  } catch (e) {
    logger.error({ job, node, why: (e as Error).message }, 'epilog: AER counters could not be judged');
    return null;
  }
}

async function judgeEpilog(run: HookRun, job: string | null): Promise<Judgement<EpilogWork>> {
  const { cfg, node, dryRun } = run;
  if (run.cfgError !== null) (await log()).error({ job, node, why: run.cfgError, stateDir: DEFAULTS.stateDir }, 'epilog: config unreadable; cleaning the default state directory');
  const aer = await judgeAer(run, job);
  let detail = '';
  // Whether the job ran with gdrgate's NCCL_TOPO_FILE, from its TaskProlog's record; null when there is none.
  let ncclTopo: boolean | null = null;
  let taskCodes: string[] | null = null;
  if (job !== null && !dryRun) {
    const st = await epilogJobState(cfg?.stateDir ?? DEFAULTS.stateDir, job, node);
    ncclTopo = st.task ? st.task.findings.some((f) => f.code === 'job-nccl-topo-set') : null;
    detail += stateLine(st);
    taskCodes = st.task ? st.task.findings.filter((f) => f.status !== 'pass' && f.status !== 'skip').map((f) => f.code) : [];
  }
  detail += aerLine(aer);
  const aerFailing = aer?.judged ? aer.failing : [];
  const probes = cfg?.probes ?? null;
  if (run.cfgError === null && probes === null && aerFailing.length === 0) return { outcome: { kind: 'healthy' }, findings: [], work: { res: null, taskCodes }, detail, brief: true };
  let outcome: Outcome = { kind: 'healthy' };
  let res: EpilogProbeResult | null = null;
  if (cfg && probes !== null) {
    try {
      // Outside the sampling policy the epilog stops here: one small file read at most, no process spawned.
      const decision = samplingDecision(probes.sampling, job, () => readStamp(cfg.spool), Date.now());
      if (!decision.probe && !dryRun) res = { ran: false, why: decision.why };
      else {
        // Probing: the budget, then the gate's own deadline for the spool, the judgement and scontrol (MODES.epilog).
        const { epilogProbes } = await import('../epilog/run.js');
        res = await withDeadline(epilogProbes({ cfg, probes, node, job, dryRun, exec: run.exec, decision, ncclTopo, deadline: run.deadline }), run.deadline);
      }
    } catch (e) {
      outcome = toOutcome(e);
    }
  }
  const bw: readonly AnyFinding[] = res?.ran ? res.findings : [];
  const failing = bw.filter((f) => f.status === 'fail');
  if (failing.length) outcome = { kind: 'unhealthy', failing };
  else if (aerFailing.length && outcome.kind === 'healthy') outcome = { kind: 'unhealthy', failing: aerFailing };
  const probed = probes === null && run.cfgError === null ? 'none' : res === null ? 'error' : res.ran ? `ran samples=${res.samples.length}` : 'skipped';
  const counts = res?.ran ? Object.fromEntries(['pass', 'warn', 'fail', 'skip', 'error'].map((s) => [s, bw.filter((f) => f.status === s).length])) : {};
  return {
    outcome,
    findings: bw,
    work: { res, taskCodes },
    detail: `${detail} probes=${probed}${res && !res.ran ? ` (${res.why})` : ''}`,
    logged: { head: { probeMs: res?.ran ? res.durationMs : null, probes: probed, why: res?.why ?? null }, summary: counts, tail: { findings: bw.filter((f) => f.status !== 'pass') } },
  };
}

/** The Epilog as a hook; `env` its environment (SLURM_JOB_ID is required but on a dry run). */
export function epilogHook(a: EpilogArgs, env: NodeJS.ProcessEnv, exec?: Exec): ActingHook<EpilogWork> {
  const dryRun = a.dryRun ?? false;
  const job = parseJobId(env.SLURM_JOB_ID);
  if (job === null && !dryRun) throw new UsageError('not in a Slurm Epilog (SLURM_JOB_ID unset or malformed)');
  return {
    mode: 'epilog',
    env,
    config: a.config,
    dryRun,
    job,
    exec,
    judge: (run) => judgeEpilog(run, job),
    record: async (run, j) => {
      // Counted for the admin's metrics (gdrgate_task_findings_total): a site-wide misconfiguration shows as a trend.
      if (job === null || !j.work?.taskCodes) return;
      try {
        recordTaskFindings(run.cfg?.spool ?? DEFAULTS.spool, run.node, job, j.work.taskCodes);
      } catch (e) {
        (await log()).error({ job, node: run.node, why: (e as Error).message }, 'epilog: could not count task findings');
      }
    },
    render: (run, j) => {
      const res = j.work?.res;
      return res?.ran && (run.dryRun || res.findings.some((f) => f.status !== 'pass')) ? [renderBw(res.findings)] : [];
    },
  };
}

export async function runEpilog(a: EpilogArgs, env: NodeJS.ProcessEnv = process.env, exec?: Exec): Promise<EpilogRun> {
  const r = await runHook(epilogHook(a, env, exec));
  return { code: r.code, text: [...r.report, ...(r.summary !== null ? [r.summary] : [])] };
}
