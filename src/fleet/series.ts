// Pure: the epilog's exported series (src/epilog/prom.ts), however they were read (Prometheus's query API, a copied
// textfile), turned into the fleet view's per-node path figures. A node whose series disagree or carry an
// impossible figure is listed as missing with the reason; none of its figures is used, none is made up.
import { badNodeName } from '../slurm/node-name.js';
import { ageProblem, type AgeRule } from './age.js';
import { impossibleFigure, type NodeMissing, type NodePathStat, type WithheldPath } from './types.js';
import { hostTwins, isNodeHost, twinsText } from './host-name.js';

export const BW_METRIC = 'gdrgate_bandwidth_bytes_per_second';
export const COUNT_METRIC = 'gdrgate_bandwidth_samples';
/** Unix time (s) of a path's newest sample (src/epilog/prom.ts): how old the path's figures are. */
export const TS_METRIC = 'gdrgate_bandwidth_last_sample_timestamp_seconds';

/** One series at one instant: its metric name, labels, and value (NaN and ±Inf kept, judged here). */
export interface Series {
  readonly name: string;
  readonly labels: ReadonlyMap<string, string>;
  readonly value: number;
  /** Where this series was read (`prometheus:<url>`, `textfile:<file>`). */
  readonly source: string;
}

export type StatWindow = 'all' | 'recent';

export interface FleetStats {
  readonly stats: NodePathStat[];
  readonly missing: NodeMissing[];
  /** What the source says of the whole fleet and changes no verdict (paths whose age cannot be told). */
  readonly notes?: string[];
  /** Paths not judged for their age (said in `missing`). */
  readonly withheld?: WithheldPath[];
}

/** A series the loader cannot attribute to a node: the whole answer is refused (which node it belongs to is unknown). */
export class SeriesError extends Error {
  override readonly name = 'SeriesError';
}

interface Path {
  node: string;
  probe: string;
  gpu: string | null;
  nic: string | null;
  direction: string;
  recipeHash: string;
  source: string;
  p50: number[];
  min: number[];
  count: number[];
  ts: number[];
}

const where = (s: Series): string => {
  const inst = s.labels.get('instance');
  return `${s.source}${inst ? ` (instance ${inst})` : ''}`;
};

/**
 * The node a series speaks of: `node`, or `exported_node` when the scrape config attached a target label `node`
 * of its own (Prometheus then renames the exporter's label; the exporter's is the epilog's own name).
 */
export function nodeOf(s: Series): string {
  const n = s.labels.get('exported_node') ?? s.labels.get('node');
  if (n === undefined) throw new SeriesError(`${s.name} series from ${where(s)} has no node label`);
  const bad = badNodeName(n);
  if (bad) throw new SeriesError(`${s.name} series from ${where(s)}: ${bad}`);
  return n;
}

/**
 * Why a series' `instance` (the target Prometheus scraped) cannot be the node it names, or null. The host's first
 * labels must be the node's (case-insensitive, fleet/host-name.ts): a golden image cloned with its textfile serves the golden node's
 * figures from every clone. An IP address, or no instance (a copied textfile), cannot be checked and is taken.
 */
export function foreignInstance(s: Series, node: string): string | null {
  const inst = s.labels.get('instance');
  if (inst === undefined || inst === '') return null;
  const host = inst.startsWith('[') ? inst.slice(1, inst.indexOf(']') >>> 0) : inst.replace(/:\d*$/, '');
  if (host.includes(':') || /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host)) return null;
  return isNodeHost(host, node) ? null : inst;
}

const need = (s: Series, label: string): string => {
  const v = s.labels.get(label);
  if (v === undefined || v === '') throw new SeriesError(`${s.name} series of node ${nodeOf(s)} from ${where(s)} has no ${label} label`);
  return v;
};

const pathKey = (node: string, probe: string, gpu: string, nic: string, direction: string, recipe: string): string => JSON.stringify([node, probe, gpu, nic, direction, recipe]);

const pathName = (p: Path): string => `${p.probe} ${p.gpu ?? '-'}→${p.nic ?? '-'} ${p.direction} recipe ${p.recipeHash}`;

/** Why one path's figures cannot be used, or null. Duplicates (two scrape jobs of one exporter) must agree. */
function problem(p: Path, window: StatWindow): string | null {
  const one = (xs: number[], what: string): string | null => (xs.length > 1 && xs.some((x) => !Object.is(x, xs[0])) ? `${pathName(p)}: ${xs.length} series disagree on ${what} (${xs.slice(0, 3).join(', ')})` : null);
  const dup = one(p.p50, 'p50') ?? one(p.min, 'min') ?? one(p.count, 'samples') ?? one(p.ts, 'the last sample time');
  if (dup) return dup;
  const [p50, min, count] = [p.p50[0], p.min[0], p.count[0]];
  if (p50 === undefined) return `${pathName(p)}: no stat="p50" series in window "${window}"`;
  if (count === undefined) return `${pathName(p)}: no ${COUNT_METRIC} series in window "${window}"`;
  const bad = impossibleFigure(p50);
  if (bad) return `${pathName(p)}: p50 of ${bad}`;
  if (!Number.isInteger(count) || count < 1) return `${pathName(p)}: ${count} samples`;
  if (min !== undefined && (impossibleFigure(min) !== null || min > p50)) return `${pathName(p)}: min of ${min} bytes/s with p50 ${p50}`;
  return null;
}

/**
 * Series of other metrics, windows or stats are ignored; a bandwidth or count series without its labels is an error.
 * With `age`, a path whose newest sample (TS_METRIC) is older than max-age or ahead of the clock is not judged, and
 * its node says so; a path without a TS_METRIC series is judged, its age unknown, said once for the source.
 */
export function statsFromSeries(series: readonly Series[], window: StatWindow = 'all', checkInstance = true, age?: AgeRule, nodeName: (label: string) => string = (l) => l): FleetStats {
  const paths = new Map<string, Path>();
  // Per path, its last sample times: kept apart until the figures are in (a time alone makes no path).
  const times = new Map<string, number[]>();
  // Per node, the instances that spoke for it without being it: their series are not counted, and the node says so.
  const foreign = new Map<string, Set<string>>();
  for (const s of series) {
    const isTs = s.name === TS_METRIC;
    if (s.name !== BW_METRIC && s.name !== COUNT_METRIC && !isTs) continue;
    if (!isTs && s.labels.get('window') !== window) continue;
    const stat = s.name === BW_METRIC ? need(s, 'stat') : isTs ? 'ts' : 'count';
    if (stat !== 'p50' && stat !== 'min' && stat !== 'count' && stat !== 'ts') continue;
    const node = nodeOf(s);
    // Against the node the figures will be filed under (a short label filed under a directory's full name must come
    // from that host: `n01` scraped from n01.c.d is not n01.a.b's), not the label alone.
    const other = checkInstance ? foreignInstance(s, nodeName(node)) : null;
    if (other !== null) {
      let f = foreign.get(node);
      if (!f) foreign.set(node, (f = new Set()));
      f.add(other);
      continue;
    }
    const [probe, direction, recipe] = [need(s, 'probe'), need(s, 'direction'), need(s, 'recipe')];
    const [gpu, nic] = [s.labels.get('gpu') ?? '', s.labels.get('nic') ?? ''];
    const key = pathKey(node, probe, gpu, nic, direction, recipe);
    if (isTs) {
      const l = times.get(key);
      if (l) l.push(s.value);
      else times.set(key, [s.value]);
      continue;
    }
    let p = paths.get(key);
    if (!p) paths.set(key, (p = { node, probe, gpu: gpu || null, nic: nic || null, direction, recipeHash: recipe, source: s.source, p50: [], min: [], count: [], ts: [] }));
    (stat === 'p50' ? p.p50 : stat === 'min' ? p.min : p.count).push(s.value);
  }
  const byNode = new Map<string, Path[]>();
  // Appended in place: a copy per path would be quadratic in one node's paths (a hostile answer has thousands).
  for (const [key, p] of paths) {
    const ts = times.get(key);
    if (ts) p.ts = ts;
    const l = byNode.get(p.node);
    if (l) l.push(p);
    else byNode.set(p.node, [p]);
  }
  const stats: NodePathStat[] = [];
  const missing: NodeMissing[] = [];
  // `node` labels of one host (GPU0005 beside gpu0005: host names are one whatever their case; gpu0005.cluster beside
  // gpu0005: a short name and its full one) are one host's figures under several names, and which are the node's now
  // cannot be told; none is counted (as for files, inputs.ts), each name says why.
  for (const all of hostTwins(byNode.keys())) {
    const named = twinsText(all, (x) => `"${x}"`, ', node=');
    for (const n of all) {
      byNode.delete(n);
      missing.push({ node: n, why: `series labelled node=${named}: names that are one host's (the same but for case, or a short name and its full one), so which are the node's cannot be told; none counted` });
    }
  }
  const undated = { paths: 0, nodes: 0, first: [] as string[] };
  const withheld: WithheldPath[] = [];
  for (const [node, ps] of byNode) {
    const bad = ps.map((p) => problem(p, window)).filter((w): w is string => w !== null);
    if (bad.length) {
      missing.push({ node, why: `${bad[0]}${bad.length > 1 ? `; +${bad.length - 1} more` : ''}` });
      continue;
    }
    const old: string[] = [];
    let undatedHere = 0;
    for (const p of ps) {
      const t = p.ts[0];
      if (age && t === undefined) undatedHere++;
      const why = age && t !== undefined ? ageProblem(t * 1000, age) : null;
      if (why !== null) {
        old.push(`${p.probe} ${p.gpu ?? '-'}→${p.nic ?? '-'} ${p.direction}: newest figure ${why}, not judged`);
        withheld.push({ node, probe: p.probe, gpu: p.gpu, nic: p.nic, direction: p.direction });
        continue;
      }
      stats.push({ node, probe: p.probe, recipeHash: p.recipeHash, gpu: p.gpu, nic: p.nic, direction: p.direction, p50: p.p50[0]!, min: p.min[0] ?? null, count: p.count[0]!, source: p.source });
    }
    if (old.length) missing.push({ node, why: `${old[0]!}${old.length > 1 ? `; +${old.length - 1} more` : ''}` });
    if (undatedHere) {
      undated.paths += undatedHere;
      if (++undated.nodes <= 3) undated.first.push(node);
    }
  }
  for (const [node, insts] of foreign) {
    const l = [...insts].sort();
    missing.push({ node, why: `series labelled node="${node}" from instance ${l.slice(0, 3).join(', ')}${l.length > 3 ? ` (+${l.length - 3} more)` : ''}, not this node's exporter: not counted` });
  }
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  stats.sort((a, b) => cmp(a.node, b.node) || cmp(a.probe, b.probe) || cmp(a.gpu ?? '', b.gpu ?? '') || cmp(a.nic ?? '', b.nic ?? '') || cmp(a.direction, b.direction) || cmp(a.recipeHash, b.recipeHash));
  missing.sort((a, b) => cmp(a.node, b.node) || cmp(a.why, b.why));
  return { stats, missing, ...(withheld.length ? { withheld } : {}), ...(undated.paths ? { notes: [undatedNote(undated)] } : {}) };
}

function undatedNote(u: { readonly paths: number; readonly nodes: number; readonly first: readonly string[] }): string {
  const more = u.nodes > u.first.length ? `, +${u.nodes - u.first.length} more` : '';
  return `${u.paths} path(s) of ${u.nodes} node(s) without a ${TS_METRIC} series (${u.first.join(', ')}${more}): judged, their age cannot be told`;
}
