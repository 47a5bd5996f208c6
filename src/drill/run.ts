// `gdrgate drill run`: probe job → drain → fault removed → resume → idle → follow-up job, every step timed.
import { appendText } from '../host/files.js';
import type { Config } from '../config.js';
import type { Exec } from '../host/exec.js';
import type { DrillSpec } from './file.js';
import { removeDrill } from './file.js';
import { hasMarker } from './marker.js';
import { drillRecord } from './path.js';
import { resumeDrillDrain } from './recheck.js';
import type { DrillReport } from './report.js';
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
  const recovery = { faultRemovedMs: null as number | null, resume: null as string | null, idleMs: null as number | null, followUp: { job: null as string | null, state: null as string | null, ms: null as number | null } };
  const finish = (): DrillReport => {
    const report: DrillReport = { version: 1, marker: spec.marker, node, fault: spec.fault, startedAt, ok: problems.length === 0, problems, probe, drain, recovery, totalMs: at() };
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

  // 2. Probe job: the prolog sees the staged fault and drains with the marker; the job is requeued held.
  const sub = await slurm.submit(node, 'gdrgate-drill-probe', spec.reservation);
  if (!sub.ok) return (problems.push(`probe job not submitted: ${sub.why}`), finish());
  const submitted = at();
  const drained = await waitFor(() => slurm.show(node), isDrained, limits.stepMs);
  drain = { drained: drained.ok, ms: drained.ok ? at() - submitted : null, reason: drained.value?.reason ?? null, markerInReason: hasMarker(drained.value?.reason ?? null, spec.marker), sinfoR: null };
  if (!drained.ok) problems.push(`not drained within ${limits.stepMs} ms of the probe job (state ${drained.value?.state ?? '?'})`);
  else if (!drain.markerInReason) problems.push(`drained, but not by this drill (reason: ${drain.reason ?? 'none'})`);
  const fate = await waitFor(() => slurm.job(sub.id), (j) => (j.state === 'PENDING' && j.reason === HELD) || isTerminal(j.state) || j.state === 'GONE', drained.ok ? limits.stepMs : 1000);
  probe = { job: sub.id, fate: `${fate.value.state}${fate.value.reason && fate.value.reason !== 'None' ? ` (${fate.value.reason})` : ''}` };
  if (drained.ok && fate.value.reason !== HELD) problems.push(`probe job ${sub.id} not requeued held: ${probe.fate}`);
  drain = { ...drain, sinfoR: await slurm.sinfoR(node) };

  // 3. Recovery: fault gone, resume as `gdrgate resume` does (only our marked drain), back to idle, a job runs.
  removeDrill(cfg.stateDir);
  recovery.faultRemovedMs = at();
  await slurm.cancel(sub.id); // the held probe would otherwise run later on its own
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
}
