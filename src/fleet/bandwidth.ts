// Per bandwidth path (probe, recipe, rail, direction) the distribution of node p50s across a class, its robust band,
// and the nodes outside it. Each rail is judged on its own: one weak rail shows even when the node's mean is fine.
import { byNatural, byText } from '../model/order.js';
import { band, outlier, zScore, type Band, type Side } from './robust.js';
import type { NodePathStat, WithheldPath } from './types.js';

/** Fewer nodes than this on a path: no band is drawn (a median of two says nothing of either). */
export const MIN_NODES = 3;

export interface PathKey {
  readonly probe: string;
  readonly recipeHash: string;
  readonly gpu: string | null;
  readonly nic: string | null;
  readonly direction: string;
}

export interface PathPoint {
  readonly node: string;
  /** Bytes per second. */
  readonly p50: number;
  readonly min: number | null;
  readonly count: number;
  readonly z: number | null;
  readonly outlier: Side;
  readonly source: string;
}

export interface PathDistribution extends PathKey {
  /** `0000:18:00.0↔mlx5_0`, `host↔mlx5_0`, `0000:18:00.0`. */
  readonly rail: string;
  /** null: fewer than MIN_NODES nodes measured it. */
  readonly band: Band | null;
  readonly points: readonly PathPoint[];
  /** Nodes of the class with figures for other rails of this probe but none for this rail under any recipe (an adapter gone); listed on the rail's largest path with a band, when most of the probe's nodes measure the rail. */
  readonly absent: readonly string[];
}

export const railOf = (k: PathKey): string => (k.nic === null ? (k.gpu ?? 'host') : `${k.gpu ?? 'host'}↔${k.nic}`);
const keyOf = (k: PathKey): string => [k.probe, k.recipeHash, k.gpu ?? '', k.nic ?? '', k.direction].join('\u0000');
/** A rail of a probe, whatever the recipe (a recipe's hash covers its device arguments: each rail has its own). */
const railKeyOf = (k: Omit<PathKey, 'recipeHash'>): string => [k.probe, k.gpu ?? '', k.nic ?? '', k.direction].join('\u0000');

interface Acc {
  key: PathKey;
  byNode: Map<string, NodePathStat>;
}

/**
 * The distributions of one class's nodes. A node with two figures for one path (spool and Prometheus) keeps the
 * one from more samples.
 *
 * "Absent" (no figure on a rail the class measures, an adapter gone): a node that measured this probe on other
 * rails and has no figure on this rail under any recipe, listed on the rail's path with the most nodes when it has
 * a band, and only when a strict majority of the probe's nodes measure the rail. Two recipes of one probe (a
 * rollout) never make each other's nodes absent, and an absent list is never longer than its rail's nodes: the work
 * and the output are linear in the figures, however many recipes or rails a source names. A node whose figure on a
 * rail was withheld (too old to judge) measured that rail: it is not absent there; nor is a node in `unsure` (an
 * input of it not read, lines of it corrupt: what it measured is not all known) on any rail.
 */
export function distributions(stats: readonly NodePathStat[], classNodes: readonly string[], withheld: readonly WithheldPath[] = [], unsure: ReadonlySet<string> = new Set()): PathDistribution[] {
  const members = new Set(classNodes);
  const paths = new Map<string, Acc>();
  const rails = new Map<string, { nodes: Set<string>; paths: Acc[] }>();
  const probesOf = new Map<string, Set<string>>();
  for (const s of stats) {
    if (!members.has(s.node) || !Number.isFinite(s.p50)) continue;
    const id = keyOf(s);
    let p = paths.get(id);
    if (!p) {
      paths.set(id, (p = { key: { probe: s.probe, recipeHash: s.recipeHash, gpu: s.gpu, nic: s.nic, direction: s.direction }, byNode: new Map() }));
      const rk = railKeyOf(s);
      const r = rails.get(rk);
      if (r) r.paths.push(p);
      else rails.set(rk, { nodes: new Set(), paths: [p] });
    }
    const had = p.byNode.get(s.node);
    if (!had || s.count > had.count) p.byNode.set(s.node, s);
    rails.get(railKeyOf(s))!.nodes.add(s.node);
    let ps = probesOf.get(s.probe);
    if (!ps) probesOf.set(s.probe, (ps = new Set()));
    ps.add(s.node);
  }
  for (const w of withheld) if (members.has(w.node) && probesOf.get(w.probe)?.has(w.node)) rails.get(railKeyOf(w))?.nodes.add(w.node);
  const absentOf = new Map<Acc, string[]>();
  for (const r of rails.values()) {
    const all = probesOf.get(r.paths[0]!.key.probe)!;
    // Every node of the rail measured its probe: how many did not measure the rail is known before any is listed.
    if (all.size - r.nodes.size === 0 || all.size - r.nodes.size >= r.nodes.size) continue;
    const main = r.paths.reduce((m, p) => (p.byNode.size > m.byNode.size || (p.byNode.size === m.byNode.size && p.key.recipeHash < m.key.recipeHash) ? p : m));
    // A node whose rails are not all known (an input of it unread, lines of it corrupt) is absent nowhere: it says why.
    if (main.byNode.size >= MIN_NODES) absentOf.set(main, [...all].filter((n) => !r.nodes.has(n) && !unsure.has(n)).sort(byNatural));
  }
  const out: PathDistribution[] = [];
  for (const p of paths.values()) {
    const { key, byNode } = p;
    const b = byNode.size >= MIN_NODES ? band([...byNode.values()].map((s) => s.p50)) : null;
    const points = [...byNode.values()]
      .map((s): PathPoint => ({ node: s.node, p50: s.p50, min: s.min, count: s.count, z: b ? zScore(b, s.p50) : null, outlier: b ? outlier(b, s.p50) : null, source: s.source }))
      .sort((x, y) => byNatural(x.node, y.node));
    out.push({ ...key, rail: railOf(key), band: b, points, absent: absentOf.get(p) ?? [] });
  }
  return out.sort((x, y) => byText(x.probe, y.probe) || byText(x.rail, y.rail) || byText(x.direction, y.direction) || byText(x.recipeHash, y.recipeHash));
}
