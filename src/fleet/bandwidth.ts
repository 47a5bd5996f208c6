// Per bandwidth path (probe, recipe, rail, direction) the distribution of node p50s across a class, its robust band,
// and the nodes outside it. Each rail is judged on its own: one weak rail shows even when the node's mean is fine.
import { byNatural, byText } from '../model/order.js';
import { band, outlier, zScore, type Band, type Side } from './robust.js';
import type { NodePathStat } from './types.js';

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
  /** Nodes of the class with figures for other paths of this probe but none for this one (an adapter gone). */
  readonly absent: readonly string[];
}

export const railOf = (k: PathKey): string => (k.nic === null ? (k.gpu ?? 'host') : `${k.gpu ?? 'host'}↔${k.nic}`);
const keyOf = (k: PathKey): string => [k.probe, k.recipeHash, k.gpu ?? '', k.nic ?? '', k.direction].join('\u0000');

/**
 * The distributions of one class's nodes. A node with two figures for one path (spool and Prometheus) keeps the
 * one from more samples.
 */
export function distributions(stats: readonly NodePathStat[], classNodes: readonly string[]): PathDistribution[] {
  const members = new Set(classNodes);
  const paths = new Map<string, { key: PathKey; byNode: Map<string, NodePathStat> }>();
  const probesOf = new Map<string, Set<string>>();
  for (const s of stats) {
    if (!members.has(s.node) || !Number.isFinite(s.p50)) continue;
    const id = keyOf(s);
    let p = paths.get(id);
    if (!p) paths.set(id, (p = { key: { probe: s.probe, recipeHash: s.recipeHash, gpu: s.gpu, nic: s.nic, direction: s.direction }, byNode: new Map() }));
    const had = p.byNode.get(s.node);
    if (!had || s.count > had.count) p.byNode.set(s.node, s);
    let ps = probesOf.get(s.probe);
    if (!ps) probesOf.set(s.probe, (ps = new Set()));
    ps.add(s.node);
  }
  const out: PathDistribution[] = [];
  for (const { key, byNode } of paths.values()) {
    const b = byNode.size >= MIN_NODES ? band([...byNode.values()].map((s) => s.p50)) : null;
    const points = [...byNode.values()]
      .map((s): PathPoint => ({ node: s.node, p50: s.p50, min: s.min, count: s.count, z: b ? zScore(b, s.p50) : null, outlier: b ? outlier(b, s.p50) : null, source: s.source }))
      .sort((x, y) => byNatural(x.node, y.node));
    const absent = [...(probesOf.get(key.probe) ?? [])].filter((n) => !byNode.has(n)).sort(byNatural);
    out.push({ ...key, rail: railOf(key), band: b, points, absent });
  }
  return out.sort((x, y) => byText(x.probe, y.probe) || byText(x.rail, y.rail) || byText(x.direction, y.direction) || byText(x.recipeHash, y.recipeHash));
}
