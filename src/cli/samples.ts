// `gdrgate samples`: per (probe, path, recipe) count, min, p50, p95, p99 and last, whole history against the recent
// window, from the epilog's spool; optionally the same as a Prometheus textfile (--prom FILE, written atomically).
import { configNamed, configPath, DEFAULTS, loadConfig } from '../config.js';
import { collectStats, unreadableSpool } from '../epilog/collect.js';
import { writeAtomic } from '../epilog/files.js';
import { renderProm } from '../epilog/prom.js';
import { countTaskFindings } from '../epilog/task-counts.js';
import { countProbeRuns } from '../epilog/probe-runs.js';
import { PROBE_DEFAULTS } from '../probes/config.js';
import { UsageError } from '../errors.js';
import { escapeControls } from '../report/escape.js';
import type { Summary, Window } from '../samples/stats.js';
import { out } from './common.js';
import { durationMs } from './options.js';
import { nodeName } from '../engine/node.js';

export interface SamplesArgs {
  readonly config?: string | undefined;
  readonly spool?: string | undefined;
  readonly probe?: readonly string[] | undefined;
  readonly since?: string | undefined;
  readonly window?: number | undefined;
  readonly json: boolean;
  readonly prom?: string | undefined;
  /** Whose samples (a spool copied from a golden image holds another node's too): default this node, as the Epilog names it. */
  readonly node?: string | undefined;
}

/** `90m`, `24h`, `7d` before now, or an ISO 8601 time; Unix ms. */
export function parseSince(s: string, now: number): number {
  const d = durationMs(s);
  if (d !== null) return now - d;
  const t = /^\d{4}-\d{2}-\d{2}/.test(s) ? Date.parse(s) : NaN;
  if (Number.isNaN(t)) throw new UsageError(`--since ${s}: give a duration (90m, 24h, 7d) or an ISO time (2026-11-29T14:00:00Z)`);
  return t;
}

const fmt = (v: number): string => (Math.abs(v) >= 1000 ? v.toFixed(0) : v.toFixed(2));
const row = (cells: readonly string[], widths: readonly number[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();

export async function samplesCommand(a: SamplesArgs): Promise<number> {
  // The config is read when it is named (--config or $GDRGATE_CONFIG) or no spool is given; --spool wins over its
  // spool, --window over its probes.window. A spool given alone is read without one (a copy examined on a machine
  // with no config).
  const cfg = configNamed(a.config) || a.spool === undefined ? await loadConfig(configPath(a.config)) : null;
  const dir = a.spool ?? cfg?.spool ?? DEFAULTS.spool;
  const lastN = a.window ?? cfg?.probes?.window ?? PROBE_DEFAULTS.window;
  const sinceTs = a.since !== undefined ? parseSince(a.since, Date.now()) : null;
  const window: Window = sinceTs !== null ? { sinceTs } : { lastN };
  const label = a.since !== undefined ? `since ${a.since}` : `last ${lastN}`;
  const probes = a.probe ?? [];
  // One node's samples, as the Epilog judges them (collect.ts): a spool copied from a golden image also holds that
  // node's, whose figures under this node's name would hide a slow path. Those left out are counted, by node.
  const of = (node: string): { col: ReturnType<typeof collectStats>; others: Map<string, number> } => {
    const others = new Map<string, number>();
    const col = collectStats(dir, [], window, (s) => {
      if (s.node !== node) others.set(s.node, (others.get(s.node) ?? 0) + 1);
      return s.node === node && (!probes.length || probes.includes(s.probe));
    });
    return { col, others };
  };
  let node = nodeName(process.env, a.node);
  let { col, others } = of(node);
  // Not given and none of this node's: a spool brought from one other node is that node's (said).
  const only = [...others.keys()];
  if (!a.node && only.length === 1 && others.get(only[0]!) === col.report.samples) {
    process.stderr.write(`gdrgate: ${dir} holds no sample of ${escapeControls(node)}: the samples of ${escapeControls(only[0]!)}, its only node\n`);
    node = only[0]!;
    ({ col, others } = of(node));
  }
  const r = col.report;
  // A spool that cannot be listed, or none of whose files can be read, is not an empty one: no textfile claiming a
  // fresh spool with 0 skipped lines (an old one is left as it is, and goes stale), and a usage error's exit code.
  const unreadable = unreadableSpool(dir, r);
  if (unreadable !== null) throw new UsageError(`${unreadable}${a.prom !== undefined ? `; ${a.prom} not written` : ''}`);
  const elsewhere = [...others].sort(([x], [y]) => (x < y ? -1 : 1)).map(([n, k]) => `${escapeControls(n)} (${k})`).join(', ');
  if (others.size && r.samples === [...others.values()].reduce((x, y) => x + y, 0)) {
    throw new UsageError(`${dir} holds no sample of ${escapeControls(node)}, only of ${elsewhere}: say whose with --node${a.prom !== undefined ? `; ${a.prom} not written` : ''}`);
  }
  if (a.prom !== undefined) {
    // The textfile's HELP says what window="recent" holds: with --since every sample since then, not the last N.
    const recent = sinceTs !== null ? `every sample since ${new Date(sinceTs).toISOString()} (--since)` : undefined;
    writeAtomic(a.prom, renderProm({ node, stats: col.stats, window: lastN, recent, spool: { ...r, future: col.future }, now: Date.now(), taskFindings: countTaskFindings(dir, node), probeRuns: countProbeRuns(dir, node) }), { above: false });
  }
  if (others.size) process.stderr.write(`gdrgate: samples of ${node} only; left out those of ${elsewhere}\n`);
  if (a.json) {
    const keys = col.stats.map((s) => ({ ...s.key, recipe: col.recipes.get(s.key.recipeHash) ?? null, unit: s.unit, all: s.all, recent: s.recent, unitMismatches: s.unitMismatches }));
    out(JSON.stringify({ spool: dir, files: r.files, samples: r.samples, torn: r.torn, corrupt: r.corrupt, future: col.future, problems: r.problems, window: { ...window, label }, keys }, null, 2));
    return 0;
  }
  const head = ['PROBE', 'NIC', 'GPU', 'DIRECTION', 'RECIPE', 'UNIT', 'WINDOW', 'N', 'MIN', 'P50', 'P95', 'P99', 'LAST'];
  const lines: string[][] = [head];
  const nums = (w: string, s: Summary | null): string[] => (s ? [w, String(s.count), fmt(s.min), fmt(s.p50), fmt(s.p95), fmt(s.p99), fmt(s.last)] : [w, '0', '-', '-', '-', '-', '-']);
  for (const s of col.stats) {
    const k = s.key;
    lines.push([k.probe, k.nic ?? '-', k.gpu ?? '-', k.direction, k.recipeHash, s.unit, ...nums('all', s.all)].map(escapeControls));
    lines.push(['', '', '', '', '', '', ...nums(label, s.recent)]);
  }
  const widths = head.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? '').length)));
  if (col.stats.length) out(lines.map((l) => row(l, widths)).join('\n'));
  else out(`no samples${probes.length ? ` of ${probes.join(', ')}` : ''} in ${dir}`);
  for (const [h, rc] of col.recipes) if (col.stats.some((s) => s.key.recipeHash === h)) out(`recipe ${h}: ${rc.tool} ${rc.args.join(' ')}${rc.numaNode !== null ? ` (NUMA node ${rc.numaNode})` : ''}`);
  out(`spool ${dir}: ${r.files.length} file(s), ${r.samples} samples${r.torn || r.corrupt ? `, skipped ${r.torn} torn and ${r.corrupt} corrupt line(s)` : ''}${col.future ? `, left out ${col.future} stamped in the future (the clock ran ahead)` : ''}${a.prom ? `; wrote ${a.prom}` : ''}`);
  for (const p of r.problems) process.stderr.write(`gdrgate: ${p}\n`);
  return 0;
}
