// What one drill measured (appended to drills.jsonl, shape: schemas/drill.schema.json) and its text rendering.

/** The requeued probe job, followed while the drilled node stays drained. */
export interface Requeue {
  /** ran-elsewhere: it ran to its end on another node; cancelled: it could not (or not within the bound); not-followed: never requeued. */
  readonly outcome: 'ran-elsewhere' | 'cancelled' | 'not-followed';
  readonly why: string;
  /** Released (when held) and unpinned from the drilled node. */
  readonly released: boolean;
  /** scontrol show job: where it ran, its batch host, how often it was requeued, its last state. */
  readonly nodeList: string | null;
  readonly batchHost: string | null;
  readonly restarts: number | null;
  readonly state: string | null;
  /** From the requeue seen to the job's end (or its cancel). */
  readonly ms: number | null;
}

export interface DrillReport {
  readonly version: 2;
  readonly marker: string;
  readonly node: string;
  readonly fault: string;
  readonly startedAt: string;
  /** true: drained with the drill marker, the probe held, resumed to idle, a follow-up job completed. */
  readonly ok: boolean;
  /** Why not ok, or why the drill stopped early; empty when ok. */
  readonly problems: readonly string[];
  readonly probe: { readonly job: string | null; readonly fate: string | null };
  readonly drain: { readonly drained: boolean; readonly ms: number | null; readonly reason: string | null; readonly markerInReason: boolean; readonly sinfoR: string | null };
  readonly requeue: Requeue;
  readonly recovery: {
    readonly faultRemovedMs: number | null;
    readonly resume: string | null;
    readonly idleMs: number | null;
    readonly followUp: { readonly job: string | null; readonly state: string | null; readonly ms: number | null };
  };
  readonly totalMs: number;
}

const ms = (v: number | null): string => (v === null ? '-' : `${(v / 1000).toFixed(2)} s`);

export function renderDrill(r: DrillReport): string {
  const lines = [
    `gdrgate drill ${r.marker} on ${r.node}: ${r.fault} (started ${r.startedAt})`,
    `  probe job        ${r.probe.job ?? '-'}`,
    `  submit → drain   ${ms(r.drain.ms)}${r.drain.drained ? '' : ' (not drained)'}`,
    `  drain reason     ${r.drain.reason ?? '-'}${r.drain.reason && !r.drain.markerInReason ? ' (no drill marker!)' : ''}`,
    `  sinfo -R         ${r.drain.sinfoR?.replace(/\s+/g, ' ') ?? '-'}`,
    `  probe job fate   ${r.probe.fate ?? '-'}`,
    `  requeued probe   ${r.requeue.outcome === 'ran-elsewhere' ? `ran on ${r.requeue.nodeList ?? '?'} (BatchHost ${r.requeue.batchHost ?? '?'}, Restarts=${r.requeue.restarts ?? '?'}) ${r.requeue.state ?? '-'} in ${ms(r.requeue.ms)}` : r.requeue.why}`,
    `  nodes            drilled ${r.node}; the probe ended on ${r.requeue.nodeList ?? '-'}`,
    `  fault removed    at ${ms(r.recovery.faultRemovedMs)}`,
    `  resume           ${r.recovery.resume ?? '-'}`,
    `  resume → idle    ${ms(r.recovery.idleMs)}`,
    `  follow-up job    ${r.recovery.followUp.job ?? '-'} ${r.recovery.followUp.state ?? '-'} in ${ms(r.recovery.followUp.ms)}`,
    `  total            ${ms(r.totalMs)}`,
    `result: ${r.ok ? 'PASS' : 'FAIL'}${r.problems.length ? ` — ${r.problems.join('; ')}` : ''}`,
  ];
  return lines.join('\n');
}
