// `gdrgate drill run`: probe job → drain → the requeued probe followed to the node it ran on (or cancelled when no
// other node can take it) → fault removed → resume → idle → follow-up job, every step timed.
import { appendText } from '../host/files.js';
import type { Config } from '../config.js';
import type { Exec } from '../host/exec.js';
import type { DrillSpec } from './file.js';
import { removeDrill } from './file.js';
import { hasMarker } from './marker.js';
import { drillRecord } from './path.js';
import { resumeDrillDrain } from './recheck.js';
import type { DrillReport, Requeue } from './report.js';
import type { JobInfo } from '../parsers/scontrol-job.js';
import { HELD, isDrained, isIdle, isTerminal, SlurmClients, waitFor } from './slurm.js';

export interface RunLimits {
  /** How long each wait may take: drain, job fate, idle, follow-up. */
  readonly stepMs: number;
}

export async function runDrill(cfg: Config, exec: Exec, spec: DrillSpec, limits: RunLimits = { stepMs: 90_000 }): Promise<DrillReport> {
  const t0 = performance.now();
  const startedAt = new Date().toISOString();
  const at = (): number => Math.round(performance.now() - t0);
  const slurm = new SlurmClients(exec, cfg.scontrol, cfg.scontrolTimeoutMs);
  const node = spec.node;
  const problems: string[] = [];
  let probe: DrillReport['probe'] = { job: null, fate: null };
  let drain: DrillReport['drain'] = { drained: false, ms: null, reason: null, markerInReason: false, sinfoR: null };
  let requeue: Requeue = { outcome: 'not-followed', why: 'the probe job was not requeued', released: false, nodeList: null, batchHost: null, restarts: null, state: null, ms: null };
  const recovery = { faultRemovedMs: null as number | null, resume: null as string | null, idleMs: null as number | null, followUp: { job: null as string | null, state: null as string | null, ms: null as number | null } };
  const finish = (): DrillReport => {
    const report: DrillReport = { version: 2, marker: spec.marker, node, fault: spec.fault, startedAt, ok: problems.length === 0, problems, probe, drain, requeue, recovery, totalMs: at() };
    appendText(drillRecord(cfg.stateDir), JSON.stringify(report) + '\n', 0o600);
    return report;
  };

  // 1. The node must take the probe: a drain of this drill's own (drill start --drain) is lifted; anyone else's is left.
  const before = await slurm.show(node);
  if (before === null) return (problems.push(`cannot read the state of ${node}: drill not run, nothing touched`), finish());
  if (isDrained(before) || before.state.startsWith('DOWN')) {
    if (!hasMarker(before.reason, spec.marker)) {
      problems.push(`${node} is ${before.state} for a reason that is not this drill's (${before.reason ?? 'none'}): left as it is`);
      return finish();
    }
    const r = await resumeDrillDrain(cfg, exec, node, spec.marker);
    if (!r.resumed) return (problems.push(`could not lift the drill's own drain: ${r.why}`), finish());
  }

  // From here the node takes jobs (its drill drain lifted, or fenced by a reservation, or --force): whatever ends the
  // run (the probe not submitted, a throw), the fault goes with it. Only a signal or SIGKILL skips this; drillRun's
  // handlers remove the file on SIGINT, SIGTERM and SIGHUP.
  let disarmed = false;
  const disarm = (): void => {
    if (disarmed) return;
    removeDrill(cfg.stateDir);
    disarmed = true;
    recovery.faultRemovedMs = at();
  };
  const probeAndRecover = async (): Promise<DrillReport> => {
    // 2. Probe job: the prolog sees the staged fault and drains with the marker; the job is requeued held.
    const sub = await slurm.submit(node, 'gdrgate-drill-probe', spec.reservation);
    if (!sub.ok) return (problems.push(`probe job not submitted: ${sub.why}`), disarm(), finish());
    const submitted = at();
    const drained = await waitFor(() => slurm.show(node), isDrained, limits.stepMs);
    drain = { drained: drained.ok, ms: drained.ok ? at() - submitted : null, reason: drained.value?.reason ?? null, markerInReason: hasMarker(drained.value?.reason ?? null, spec.marker), sinfoR: null };
    if (!drained.ok) problems.push(`not drained within ${limits.stepMs} ms of the probe job (state ${drained.value?.state ?? '?'})`);
    else if (!drain.markerInReason) problems.push(`drained, but not by this drill (reason: ${drain.reason ?? 'none'})`);
    // Requeued: pending again with a restart counted (held, or not with SchedulerParameters=nohold_on_prolog_fail).
    const requeued = (j: JobInfo | null): boolean => j !== null && ((j.state === 'PENDING' && j.restarts > 0) || isTerminal(j.state));
    const fate = await waitFor(() => slurm.showJob(sub.id), requeued, drained.ok ? limits.stepMs : 1000);
    const fj = fate.value;
    const sq = await slurm.job(sub.id); // squeue's words for the reason (scontrol may print them with underscores)
    probe = { job: sub.id, fate: `${sq.state}${sq.reason && sq.reason !== 'None' ? ` (${sq.reason})` : ''}` };
    if (drained.ok && !(fj?.state === 'PENDING' && fj.restarts > 0)) problems.push(`probe job ${sub.id} not requeued: ${probe.fate}`);
    drain = { ...drain, sinfoR: await slurm.sinfoR(node) };

    // 3. The requeued probe, while the fault stays: released if held, unpinned from the drilled node, followed to the
    // node it runs on. With no other node that could take it (a one-node cluster), or none within the bound, cancelled.
    if (drained.ok && fj?.state === 'PENDING' && fj.restarts > 0) requeue = await followRequeue(slurm, sub.id, node, fj, sq.reason === HELD, limits.stepMs, problems);
    else await slurm.cancel(sub.id);

    // 4. Recovery: fault gone, resume as `gdrgate resume` does (only our marked drain), back to idle, a job runs.
    disarm();
    if (drained.ok && drain.markerInReason) {
      const r = await resumeDrillDrain(cfg, exec, node, spec.marker);
      recovery.resume = r.why;
      if (!r.resumed) problems.push(`resume: ${r.why}`);
    } else recovery.resume = 'not attempted: no drain of this drill';
    const r0 = at();
    const idle = await waitFor(() => slurm.show(node), isIdle, limits.stepMs);
    recovery.idleMs = idle.ok ? at() - r0 : null;
    if (!idle.ok) problems.push(`not idle within ${limits.stepMs} ms (state ${idle.value?.state ?? '?'})`);
    const follow = idle.ok ? await slurm.submit(node, 'gdrgate-drill-followup', spec.reservation) : null;
    if (follow?.ok) {
      const f0 = at();
      const done = await waitFor(() => slurm.job(follow.id), (j) => isTerminal(j.state), limits.stepMs);
      recovery.followUp = { job: follow.id, state: done.value.state, ms: at() - f0 };
      if (done.value.state !== 'COMPLETED') problems.push(`follow-up job ${follow.id} ${done.value.state}`);
    } else if (follow) problems.push(`follow-up job not submitted: ${follow.why}`);
    return finish();
  };
  try {
    return await probeAndRecover();
  } finally {
    disarm();
  }
}

/** Lets the requeued probe run elsewhere and follows it to its end (at most `boundMs`); cancels it when it cannot. */
async function followRequeue(slurm: SlurmClients, id: string, node: string, j: JobInfo, held: boolean, boundMs: number, problems: string[]): Promise<Requeue> {
  const t0 = performance.now();
  const took = (): number => Math.round(performance.now() - t0);
  const base: Requeue = { outcome: 'cancelled', why: '', released: false, nodeList: null, batchHost: null, restarts: j.restarts, state: j.state, ms: null };
  const cancel = async (why: string): Promise<Requeue> => {
    const ok = await slurm.cancel(id);
    const last = await slurm.showJob(id);
    return { ...base, why: ok ? why : `${why}; scancel failed`, state: last?.state ?? base.state, restarts: last?.restarts ?? base.restarts, ms: took() };
  };
  const others = j.partition === null ? ({ ok: false, why: 'the job names no partition' } as const) : await slurm.otherNodes(j.partition, node);
  if (!others.ok) {
    problems.push(`requeued probe ${id}: cannot list the other nodes (${others.why})`);
    return cancel(`cancelled: the other nodes could not be listed (${others.why})`);
  }
  // A one-node partition: the requeued job cannot run anywhere else. Not a problem of the drill: said, and cancelled.
  if (others.nodes.length === 0) return cancel(`cancelled: no other node of partition ${j.partition} can take it`);
  const moved = await slurm.moveOff(id, node, held);
  if (!moved.ok) {
    problems.push(`requeued probe ${id}: not released to the other nodes (${moved.why})`);
    return cancel(`cancelled: could not release it (${moved.why})`);
  }
  const end = await waitFor(() => slurm.showJob(id), (v) => v !== null && isTerminal(v.state), boundMs);
  const v = end.value;
  if (!end.ok || v === null) {
    problems.push(`requeued probe ${id} did not end on another node within ${boundMs} ms (${v?.state ?? 'unreadable'})`);
    return { ...(await cancel(`cancelled: not run on another node within ${boundMs} ms`)), released: true };
  }
  const done: Requeue = { outcome: 'ran-elsewhere', why: `ran on ${v.nodeList ?? '?'} after ${v.restarts} requeue(s)`, released: true, nodeList: v.nodeList, batchHost: v.batchHost, restarts: v.restarts, state: v.state, ms: took() };
  if (v.state !== 'COMPLETED') problems.push(`requeued probe ${id} ${v.state} on ${v.nodeList ?? '?'}`);
  if (v.nodeList === node || v.batchHost === node) problems.push(`requeued probe ${id} ran on the drilled node ${node}`);
  return done;
}
