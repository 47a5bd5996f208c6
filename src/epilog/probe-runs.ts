// Every probe run the Epilog made, counted for the admin: one line per planned probe per run (src/epilog/counted-log.ts)
// with its outcome, so a probe that keeps failing, a tool missing on a node, or a budget too short for the plan shows
// in the textfile (gdrgate_probe_runs_total) instead of only in a log line and a bandwidth series going stale.
// Written by root (the Epilog) into root's spool directory; read back with every field checked all the same.
import { appendCounted, readCounted } from './counted-log.js';
import { type ProbeOutcome, subjectOf } from '../probes/types.js';

export const PROBE_RUNS_FILE = 'probe-runs.jsonl';
export const PROBE_RUNS_OLD = 'probe-runs.1.jsonl';
const LOG = { live: PROBE_RUNS_FILE, old: PROBE_RUNS_OLD };

/** ok: samples; failed: the tool ran and gave none (an error of the path or the tool); unusable: the tool missing or untrusted; budget: not run, no time left. */
export const PROBE_OUTCOMES = ['ok', 'failed', 'unusable', 'budget'] as const;
export type ProbeOutcomeKind = (typeof PROBE_OUTCOMES)[number];

export interface ProbeRunCount {
  readonly probe: string;
  /** The NIC and GPU (`mlx5_0/0000:41:00.0`), the NIC, or the nvbandwidth test case. */
  readonly subject: string;
  readonly outcome: ProbeOutcomeKind;
  readonly runs: number;
  /** Unix ms of the newest such run. */
  readonly lastTs: number;
}

const PROBE_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;
/** Any adapter name the kernel allows (a rename limits only length and '/'), without control characters; labels are escaped. */
const SUBJECT_RE = /^[^\u0000-\u001f\u007f]{1,128}$/;

export function recordProbeRuns(spoolDir: string, node: string, job: string | null, outcomes: readonly ProbeOutcome[], now = Date.now()): void {
  appendCounted(spoolDir, LOG, outcomes.map((o) => ({ ts: now, node, job, probe: o.spec.probe, subject: subjectOf(o.spec), outcome: o.kind })));
}

/**
 * This node's runs per probe, subject and outcome, ordered; lines that are torn, name no known outcome, or are another
 * node's (a spool copied from a golden image, as the samples: src/epilog/run.ts) are skipped.
 */
export function countProbeRuns(spoolDir: string, node: string): ProbeRunCount[] {
  const by = new Map<string, { probe: string; subject: string; outcome: ProbeOutcomeKind; runs: number; lastTs: number }>();
  for (const l of readCounted(spoolDir, LOG)) {
    const { ts, probe, subject, outcome, node: of } = (l ?? {}) as { ts?: unknown; probe?: unknown; subject?: unknown; outcome?: unknown; node?: unknown };
    if (of !== node) continue;
    if (typeof ts !== 'number' || !Number.isFinite(ts) || typeof probe !== 'string' || !PROBE_RE.test(probe) || typeof subject !== 'string' || !SUBJECT_RE.test(subject)) continue;
    if (!PROBE_OUTCOMES.includes(outcome as ProbeOutcomeKind)) continue;
    const key = `${probe}\0${subject}\0${String(outcome)}`;
    const c = by.get(key) ?? { probe, subject, outcome: outcome as ProbeOutcomeKind, runs: 0, lastTs: ts };
    c.runs++;
    c.lastTs = Math.max(c.lastTs, ts);
    by.set(key, c);
  }
  const order = (c: ProbeRunCount): string => `${c.probe}\0${c.subject}\0${PROBE_OUTCOMES.indexOf(c.outcome)}`;
  return [...by.values()].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}
