// The epilog's probing run: sampling policy, one prober per node, probes under the budget, samples to the spool,
// judgement against the node class's envelopes, the Prometheus textfile. Draining is the caller's (src/cli/epilog.ts).
import { trustedFiles, type Config } from '../config.js';
import { readNode } from '../engine/evaluate.js';
import type { Deadline } from '../runner/deadline.js';
import type { Exec } from '../host/exec.js';
import { notExecutable } from '../host/entries.js';
import type { Host } from '../host/host.js';
import { openHost } from '../host/open.js';
import { untrustedReason } from '../host/trust.js';
import { log } from '../log.js';
import type { ProbesConfig } from '../probes/config.js';
import { planProbes } from '../probes/plan.js';
import { runProbes, tiedProbes } from '../probes/run.js';
import type { ProbeOutcome } from '../probes/types.js';
import type { Sample } from '../samples/sample.js';
import { appendSamples } from '../samples/spool.js';
import { CLOCK_TOLERANCE_MS } from '../samples/stats.js';
import { jobsText, otherJobs } from './busy.js';
import { devicesHeld } from './holders.js';
import { heldReason } from './holders-rule.js';
import { portTraffic } from './port-traffic.js';
import { trafficReason, untoldText } from './port-traffic-rule.js';
import { collectStats, unreadableSpool } from './collect.js';
import { ensureDir, readStamp, readWindowFrom, takeProbeLock, writeAtomic, writeStamp, writeWindowFrom } from './files.js';
import type { BwFinding } from './finding.js';
import { renamedNics } from './renamed.js';
import { judge } from './judge.js';
import { samplingDecision, type SamplingVerdict } from './policy.js';
import { renderProm } from './prom.js';
import { countTaskFindings } from './task-counts.js';
import { countProbeRuns, recordProbeRuns } from './probe-runs.js';

export interface EpilogProbeInput {
  readonly cfg: Config;
  readonly probes: ProbesConfig;
  readonly node: string;
  readonly job: string | null;
  /** Probe whatever the sampling policy says, and write nothing (spool, stamp, textfile). */
  readonly dryRun: boolean;
  readonly exec: Exec;
  /** The sampling policy's verdict (shouldProbe), taken before this module was even loaded. */
  readonly decision: SamplingVerdict;
  /** Whether the job ran with gdrgate's NCCL_TOPO_FILE (its TaskProlog's record); null or absent: not known. */
  readonly ncclTopo?: boolean | null;
  /** The Epilog's deadline: the node's reads and the class choice ask it, so work its race abandoned stops. */
  readonly deadline?: Deadline;
}

export type EpilogProbeResult =
  | { readonly ran: false; readonly why: string }
  | {
      readonly ran: true;
      readonly why: string;
      readonly cls: string;
      readonly outcomes: readonly ProbeOutcome[];
      readonly samples: readonly Sample[];
      readonly findings: readonly BwFinding[];
      /** What went wrong writing the spool or the textfile; logged, never a finding of the node. */
      readonly writeErrors: readonly string[];
      readonly durationMs: number;
    };

export async function epilogProbes(i: EpilogProbeInput): Promise<EpilogProbeResult> {
  const p = i.probes;
  const dir = i.cfg.spool;
  const started = Date.now();
  const decision = i.decision;
  if (!decision.probe && !i.dryRun) return { ran: false, why: decision.why };
  ensureDir(dir);
  const lock = takeProbeLock(dir, p.budgetMs + 60_000);
  if ('held' in lock) return { ran: false, why: lock.held };
  try {
    // A node other jobs use now is not probed: their traffic would read as a slow path (src/epilog/busy.ts).
    // The root's Host, opened only where another job's directory is there, then the one the node is read with.
    let opened: Promise<Host> | undefined;
    const others = await otherJobs(i.cfg.stateDir, i.job, () => (opened ??= openHost(i.cfg.root)));
    if (others.length && !i.dryRun) return { ran: false, why: `other jobs run on this node (${jobsText(others)}): not probed, their traffic would read as a slow path` };
    const stamp = readStamp(dir);
    // Two epilogs may both have passed the policy; the one that got the lock second asks again.
    const again = samplingDecision(p.sampling, i.job, () => stamp, started);
    if (!again.probe && !i.dryRun) return { ran: false, why: `another epilog probed meanwhile: ${again.why}` };
    // The engine's read of the node (trust, Host, inventory, class); the bandwidth judgement replaces the checks.
    const { host, inv, baseline } = await readNode({ root: i.cfg.root, opened, baseline: i.cfg.baseline, node: i.node, trust: trustedFiles(i.cfg), pidFiles: i.cfg.slurmdPidFiles, gresConf: i.cfg.gresConf, deadline: i.deadline });
    const cls = baseline!.cls;
    const uid = process.getuid?.() ?? 0;
    // A tool root may not execute is unusable here (a skip), as its spawn's EACCES was before setpriv started it (126).
    const untrusted = (f: string): string | null => untrustedReason(f, uid) ?? notExecutable(f);
    const units = planProbes(inv, p);
    // A process outside the jobs busy.ts sees that holds a probed GPU or adapter open (src/epilog/holders-rule.ts).
    const held = units.length ? await devicesHeld(host, units, process.pid) : null;
    if (held && !held.probe && !i.dryRun) return { ran: false, why: heldReason(held, false) };
    // Traffic no process holds a device for (the kernel's users of the adapter, a peer's RDMA): its ports' counters.
    const traffic = units.length ? await portTraffic(host, inv, units, p.quiet) : null;
    if (traffic && !traffic.probe && !i.dryRun) return { ran: false, why: trafficReason(traffic, false) };
    // Claimed before probing: the interval rule of the next epilog counts from now even if this one is killed.
    if (!i.dryRun) writeStamp(dir, { ts: started, job: i.job, cursor: stamp?.cursor ?? 0 });
    const run = await runProbes(units, {
      exec: i.exec,
      budgetMs: p.budgetMs,
      cursor: stamp?.cursor ?? 0,
      ctx: { node: i.node, job: i.job, now: Date.now },
      untrusted,
      // Each probe dies with this process, killed or not (a perftest server left waiting held its port and the GPU).
      tieTo: units.length ? await tiedProbes(i.exec, untrusted) : undefined,
    });
    const nt = i.ncclTopo;
    const samples = run.outcomes.flatMap((o) => (o.kind === 'ok' ? o.samples : [])).map((x) => (typeof nt === 'boolean' ? { ...x, ncclTopo: nt } : x));
    const writeErrors: string[] = [];
    let unwritten: readonly Sample[] = samples;
    if (!i.dryRun && samples.length) {
      const a = appendSamples({ dir }, samples);
      // Judged besides the spool: only what did not reach it (after a short write its whole lines are read back).
      unwritten = a.unwritten;
      if (!a.ok) writeErrors.push(`spool ${dir}: ${a.code} ${a.message}`);
      writeErrors.push(...a.notes);
    }
    // The judged window: this node's samples (a spool copied from a golden image is another node's history), since
    // the later of the class's band capture and our last bandwidth drain (what came before is the path as it was: after a
    // repair and a resume, one busy run on top of the broken period's samples drained the node again).
    const from = windowStart([windowFromNow(dir, i.dryRun), Date.parse(cls.captured?.at ?? '')], Date.now());
    const col = collectStats(dir, unwritten, from === null ? { lastN: p.window } : { lastN: p.window, sinceTs: from }, (s) => s.node === i.node);
    const findings = judge({ outcomes: run.outcomes, stats: col.stats, envelopes: cls.probes ?? null, minSamples: p.minSamples, renamed: renamedNics(cls.devices, inv.nics) });
    if (!i.dryRun) {
      try {
        recordProbeRuns(dir, i.node, i.job, run.outcomes);
      } catch (e) {
        writeErrors.push(`probe runs ${dir}: ${(e as Error).message}`);
      }
      const unreadable = unreadableSpool(dir, col.report);
      if (p.promFile !== null && unreadable !== null) writeErrors.push(`textfile ${p.promFile} not written: ${unreadable}`);
      else if (p.promFile !== null) {
        try {
          writeAtomic(p.promFile, renderProm({ node: i.node, stats: col.stats, window: p.window, recent: `the last ${p.window} samples this node judged${from === null ? '' : ` since ${new Date(from).toISOString()}`}`, spool: { ...col.report, future: col.future }, now: Date.now(), taskFindings: countTaskFindings(dir, i.node), probeRuns: countProbeRuns(dir, i.node) }), { above: false });
        } catch (e) {
          writeErrors.push(`textfile ${p.promFile}: ${(e as Error).message}`);
        }
      }
      writeStamp(dir, { ts: started, job: i.job, cursor: run.cursor });
    }
    const logger = await log();
    for (const o of run.outcomes) {
      if (o.kind === 'ok' && o.notes.length) logger.warn({ node: i.node, job: i.job, probe: o.spec.probe, notes: o.notes }, 'probe notes');
      if (o.kind === 'failed') logger.warn({ node: i.node, job: i.job, probe: o.spec.probe, why: o.why, lines: o.lines }, 'probe failed');
    }
    if (col.future) logger.warn({ node: i.node, job: i.job, future: col.future }, 'epilog: spool samples stamped in the future (the clock ran ahead) left out of the statistics');
    if (writeErrors.length) logger.error({ node: i.node, job: i.job, writeErrors }, 'epilog: samples or textfile not written');
    const untold = traffic ? untoldText(traffic) : null;
    const busy =
      (others.length ? `; other jobs run on this node (job ${others.slice(0, 4).join(', job ')}): an Epilog would not probe` : '') +
      (held && !held.probe ? `; ${heldReason(held, true)}` : '') +
      (traffic && !traffic.probe ? `; ${trafficReason(traffic, true)}` : '') +
      (untold ? `; ${untold}` : '');
    return { ran: true, why: i.dryRun && !decision.probe ? `dry run (policy: ${decision.why})${busy}` : `${decision.why}${busy}`, cls: cls.name, outcomes: run.outcomes, samples, findings, writeErrors, durationMs: run.durationMs };
  } finally {
    lock.release();
  }
}

/** The latest of the given starts that is a time at all and not ahead of the clock (one stamped ahead would hide every sample); null: none. */
export function windowStart(starts: readonly (number | null)[], now: number): number | null {
  const ok = starts.filter((x): x is number => x !== null && Number.isFinite(x) && x <= now + CLOCK_TOLERANCE_MS);
  return ok.length ? Math.max(...ok) : null;
}

/**
 * The window's start as written, or now where it was written ahead of the clock (a drain while the clock ran fast): it
 * still starts after the drain, so it is rewritten as now (a start left in the future judged nothing until the clock
 * caught up, and one dropped brought back every sample before the drain).
 */
function windowFromNow(dir: string, dryRun: boolean): number | null {
  const from = readWindowFrom(dir);
  const now = Date.now();
  if (from === null || from <= now + CLOCK_TOLERANCE_MS) return from;
  if (!dryRun) writeWindowFrom(dir, now, `was ${new Date(from).toISOString()}, ahead of the clock: set to now`);
  return now;
}
