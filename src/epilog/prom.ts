// Pure: sample statistics as a node_exporter textfile (Prometheus text exposition format 0.0.4), in base units.
import { BYTES_PER_SECOND } from '../samples/sample.js';
import type { KeyStats, Summary } from '../samples/stats.js';
import type { ProbeRunCount } from './probe-runs.js';

export { BYTES_PER_SECOND };

export interface PromInput {
  readonly node: string;
  readonly stats: readonly KeyStats[];
  /** Size of the recent window (last N samples per path), for the help text. */
  readonly window: number;
  /** What window="recent" holds where it is not just the last N samples (the Epilog's judged window; `samples --since`). */
  readonly recent?: string | undefined;
  /** future: samples stamped after now + CLOCK_TOLERANCE_MS, left out of the statistics (collect.ts). */
  readonly spool: { readonly torn: number; readonly corrupt: number; readonly future?: number };
  readonly now: number;
  /** TaskProlog findings counted per code (src/epilog/task-counts.ts). */
  readonly taskFindings?: Readonly<Record<string, number>>;
  /** The Epilog's probe runs by outcome (src/epilog/probe-runs.ts). */
  readonly probeRuns?: readonly ProbeRunCount[];
}

const esc = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (l: Record<string, string>): string => `{${Object.entries(l).map(([k, v]) => `${k}="${esc(v)}"`).join(',')}}`;
const STATS = ['min', 'p50', 'p95', 'p99', 'last'] as const;

function family(name: string, help: string, rows: string[]): string[] {
  return rows.length ? [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, ...rows] : [];
}

export function renderProm(i: PromInput): string {
  const bw: string[] = [];
  const count: string[] = [];
  const lastTs: string[] = [];
  for (const s of i.stats) {
    const k = s.key;
    const base = { node: i.node, probe: k.probe, gpu: k.gpu ?? '', nic: k.nic ?? '', direction: k.direction, recipe: k.recipeHash };
    const f = BYTES_PER_SECOND[s.unit];
    const windows: [string, Summary | null][] = [['all', s.all], ['recent', s.recent]];
    for (const [window, sum] of windows) {
      if (sum === null) continue;
      for (const stat of STATS) bw.push(`gdrgate_bandwidth_bytes_per_second${labels({ ...base, window, stat })} ${sum[stat] * f}`);
      count.push(`gdrgate_bandwidth_samples${labels({ ...base, window })} ${sum.count}`);
    }
    lastTs.push(`gdrgate_bandwidth_last_sample_timestamp_seconds${labels(base)} ${s.all.lastTs / 1000}`);
  }
  const node = labels({ node: i.node });
  return [
    ...family('gdrgate_bandwidth_bytes_per_second', `Bandwidth of a probe path and recipe: min, p50 (the middle value; of an even count the upper one), nearest-rank p95 and p99, and the newest sample, over the whole spool (window="all") or ${i.recent ?? `the last ${i.window} samples`} (window="recent").`, bw),
    ...family('gdrgate_bandwidth_samples', 'Samples of a probe path and recipe in the window.', count),
    ...family('gdrgate_bandwidth_last_sample_timestamp_seconds', 'Unix time of the newest sample of a probe path and recipe.', lastTs),
    ...family('gdrgate_spool_skipped_lines', 'Spool lines skipped when the statistics were computed (torn: cut by a crash or a full disk; corrupt: not a sample; future: stamped more than 60 s after the clock, written while it ran ahead).', [
      `gdrgate_spool_skipped_lines${labels({ node: i.node, kind: 'torn' })} ${i.spool.torn}`,
      `gdrgate_spool_skipped_lines${labels({ node: i.node, kind: 'corrupt' })} ${i.spool.corrupt}`,
      `gdrgate_spool_skipped_lines${labels({ node: i.node, kind: 'future' })} ${i.spool.future ?? 0}`,
    ]),
    ...(i.taskFindings && Object.keys(i.taskFindings).length
      ? [
          "# HELP gdrgate_task_findings_total Findings the TaskProlog reported from inside jobs (memlock, device visibility), by code: each job's own unverified report (task.json is written by the job's user; only known codes are counted, nothing acts on them).",
          '# TYPE gdrgate_task_findings_total counter',
          ...Object.entries(i.taskFindings)
            .sort()
            .map(([code, n]) => `gdrgate_task_findings_total${labels({ node: i.node, code })} ${n}`),
        ]
      : []),
    ...(i.probeRuns?.length
      ? [
          '# HELP gdrgate_probe_runs_total Probe runs the Epilog made, by outcome: ok (samples), failed (the tool ran and gave none: see the Epilog\'s bw-probe-failed line in the log), unusable (the tool missing, not executable or not trusted), budget (not run: the time budget was spent).',
          '# TYPE gdrgate_probe_runs_total counter',
          ...i.probeRuns.map((c) => `gdrgate_probe_runs_total${labels({ node: i.node, probe: c.probe, subject: c.subject, outcome: c.outcome })} ${c.runs}`),
        ]
      : []),
    ...family('gdrgate_probe_last_run_timestamp_seconds', 'Unix time of the newest probe run with this outcome (a failed one newer than the newest ok one: the path or the tool is broken now).', (i.probeRuns ?? []).map((c) => `gdrgate_probe_last_run_timestamp_seconds${labels({ node: i.node, probe: c.probe, subject: c.subject, outcome: c.outcome })} ${c.lastTs / 1000}`)),
    ...family('gdrgate_samples_generated_timestamp_seconds', 'Unix time this file was written.', [`gdrgate_samples_generated_timestamp_seconds${node} ${i.now / 1000}`]),
    '',
  ].join('\n');
}
