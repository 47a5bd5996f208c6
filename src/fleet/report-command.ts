// `gdrgate fleet report DIR`: read every node of the directory through the engine, its spools, and every extra
// figures a source brings (Prometheus), then judge each class. The CLI parses, calls this, and prints.
import { UsageError } from '../errors.js';
import { loadBaseline } from '../baseline/load.js';
import type { Baseline } from '../model/baseline.js';
import { ageProblem, DEFAULT_MAX_AGE_MS, type AgeRule } from './age.js';
import { classifier } from './classes.js';
import { readCollectSummary } from './collect-summary.js';
import { hostNamer } from './host-name.js';
import { scanFleetDir } from './inputs.js';
import { readFleet, type FleetProgress, type ReadNode } from './read.js';
import { buildFleetReport, type FigureSource, type FleetReport } from './report.js';
import { spoolStatsInTurns, type SpoolStats } from './spool-stats.js';
import { SourceError } from './source-error.js';
import type { NodeMissing, NodePathStat, WithheldPath } from './types.js';

/** More bandwidth figures from elsewhere (Prometheus, a collector): merged with the spools' before judging. */
export interface StatsSource {
  readonly name: string;
  /** Figures older than the rule's max-age, or ahead of its clock, are left out and said (series.ts). */
  load(age: AgeRule, nodeName: (label: string) => string): Promise<{ stats: NodePathStat[]; missing: NodeMissing[]; notes?: string[]; withheld?: WithheldPath[] }>;
}

export interface FleetArgs {
  readonly dir: string;
  /** Classes by the baseline's host patterns; null: the whole directory is one class. */
  readonly baseline: string | null;
  readonly sources?: readonly StatsSource[];
  readonly onProgress?: (p: FleetProgress) => void;
  readonly concurrency?: number;
  /** A figure or a snapshot older than this is not judged (default DEFAULT_MAX_AGE_MS). */
  readonly maxAgeMs?: number;
  /** This host's clock, ms (default Date.now()). */
  readonly now?: number;
}

export interface FleetRun {
  readonly report: FleetReport;
  /** What the judge read, for the callers that build on it (baseline capture --from-fleet). */
  readonly nodes: readonly ReadNode[];
  readonly baseline: Baseline | null;
  readonly spools: SpoolStats;
}

export async function runFleetReport(a: FleetArgs): Promise<FleetRun> {
  const baseline = a.baseline === null ? null : await loadBaseline(a.baseline);
  const inputs = scanFleetDir(a.dir);
  const age: AgeRule = { now: a.now ?? Date.now(), maxAgeMs: a.maxAgeMs ?? DEFAULT_MAX_AGE_MS };
  // The spools are read on this thread while the snapshots are read (in the pool's workers, or in turns in process).
  const [{ read: readAll, missing: unreadable }, spools] = await Promise.all([
    readFleet(inputs.snapshots, { ...(a.onProgress ? { onProgress: a.onProgress } : {}), ...(a.concurrency ? { concurrency: a.concurrency } : {}) }),
    spoolStatsInTurns(inputs.spools, 4, age),
  ]);
  const stats: NodePathStat[] = [...spools.stats];
  const withheld: WithheldPath[] = [...spools.withheld];
  const broken: NodeMissing[] = [...inputs.broken, ...unreadable, ...spools.broken];
  // A snapshot older than max-age (or stamped ahead of the clock) is not the node now: its facts are not judged; nor
  // are those of one whose time cannot be read (none recorded, or not as gdrgate writes it): its age cannot be told.
  const read: ReadNode[] = [];
  for (const r of readAll) {
    const old = r.time === null ? 'at a time its manifest does not say (none, or not as gdrgate writes it), so its age cannot be told' : ageProblem(r.time, age);
    if (old === null) read.push(r);
    else broken.push({ node: r.node, why: `snapshot taken ${old}: its facts are not judged` });
  }
  const problems = [...inputs.problems, ...spools.problems];
  const sources: FigureSource[] = [];
  if (inputs.spools.size > 0 || spools.broken.length > 0) sources.push({ name: 'the spools', nodes: new Set(spools.stats.map((s) => s.node)), error: null });
  // Nodes fleet collect asked and got no snapshot from; a snapshot copied in since counts as read.
  // A Prometheus `node` label or a collect summary's name that is a directory input's host under another spelling (in
  // another case, its short or full name) is that node (the directory's are Slurm's, as collect writes them).
  const canon = hostNamer([...inputs.snapshots.map((x) => x.node), ...inputs.spools.keys(), ...inputs.broken.map((x) => x.node)]);
  const folded = <T extends { readonly node: string }>(xs: readonly T[]): T[] => xs.map((x) => (canon(x.node) === x.node ? x : { ...x, node: canon(x.node) }));
  const raw = await readCollectSummary(a.dir);
  const collected = { ...raw, missing: folded(raw.missing), answered: raw.answered.map(canon) };
  for (const p of collected.problems) problems.push(p);
  const readNames = new Set(readAll.map((r) => r.node));
  const missing = collected.missing.filter((m) => !readNames.has(m.node));
  // A node that answered fleet collect and whose snapshot is not here now (removed, renamed, never copied) is named.
  const inputNames = new Set([...inputs.snapshots.map((x) => x.node), ...inputs.broken.map((x) => x.node)]);
  for (const n of collected.answered) if (!inputNames.has(n)) missing.push({ node: n, why: 'answered fleet collect, but no snapshot of it is in the directory now' });
  for (const s of a.sources ?? []) {
    // A source that cannot be read is a finding about every node's figures from it, never the end of the report.
    let got: Awaited<ReturnType<StatsSource['load']>>;
    try {
      got = await s.load(age, canon);
    } catch (e) {
      if (e instanceof UsageError) throw e;
      // The source's name leads the line; its error says why without naming it again.
      const why = (e instanceof SourceError ? e.detail : (e as Error).message).slice(0, 300);
      problems.push(`${s.name}: ${why}`);
      sources.push({ name: s.name, nodes: new Set(), error: why });
      continue;
    }
    const mine = folded(got.stats);
    for (const x of mine) stats.push(x);
    // Two spellings of one host, folded to one name, say the same thing once.
    const said = new Set<string>();
    for (const m of folded(got.missing)) if (!said.has(`${m.node}\u0000${m.why}`) && said.add(`${m.node}\u0000${m.why}`)) broken.push({ node: m.node, why: `${s.name}: ${m.why}` });
    for (const n of got.notes ?? []) problems.push(`${s.name}: ${n}`);
    for (const w of folded(got.withheld ?? [])) withheld.push(w);
    sources.push({ name: s.name, nodes: new Set(mine.map((x) => x.node)), error: null });
  }
  if (readAll.length === 0 && stats.length === 0 && broken.length === 0) problems.push(`${a.dir}: no snapshot (<node>.tar.gz) and no spool (<node>.samples.jsonl) found`);
  // Inputs not taken (a file name refused, the collect summary or an entry of it unreadable): the fleet is not all judged.
  const refused = inputs.problems.length + collected.problems.length;
  const report = buildFleetReport({ dir: a.dir, nodes: read, classOf: classifier(baseline), stats, missing, broken, sources, withheld, unsure: [...inputs.unreadSpools, ...spools.unsure], problems, refused });
  return { report, nodes: read, baseline, spools };
}
