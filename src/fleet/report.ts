// The fleet report: per class the facts' majority and who differs, per path the distribution and who is outside
// it, and per node one verdict, worst first. Pure: inputs in, the report out (JSON: schemas/fleet-report.schema.json).
import { IMPACT_RANK, type Difference, type Impact } from '../compare/types.js';
import { byNatural } from '../model/order.js';
import { VERSION } from '../version.js';
import { distributions, type PathDistribution } from './bandwidth.js';
import { classFacts, type ClassFact, type ClassNode } from './facts.js';
import type { NodeMissing, NodePathStat } from './types.js';

export interface RailFinding {
  readonly probe: string;
  readonly rail: string;
  readonly direction: string;
  readonly recipeHash: string;
  /** 'low': the node's p50 is below the class's band; 'absent': the class measures it, this node has no figure. */
  readonly kind: 'low' | 'absent';
  readonly p50: number | null;
  readonly median: number;
  readonly low: number | null;
  readonly z: number | null;
}

export interface NodeVerdict {
  readonly node: string;
  readonly class: string;
  readonly status: 'ok' | 'differs' | 'missing';
  readonly worst: Impact | null;
  /** a: this node's value, b: the class majority's. */
  readonly differences: readonly Difference[];
  readonly rails: readonly RailFinding[];
  /** Figures only (no snapshot), or a snapshot only (no figures). */
  readonly notes: readonly string[];
}

export interface FleetClass {
  readonly name: string;
  readonly nodes: readonly string[];
  readonly reference: string | null;
  readonly facts: readonly ClassFact[];
  readonly paths: readonly PathDistribution[];
}

export interface FleetReport {
  readonly tool: 'gdrgate';
  readonly command: 'fleet report';
  readonly version: string;
  readonly dir: string;
  readonly summary: {
    readonly nodes: number;
    readonly read: number;
    readonly missing: number;
    readonly flagged: number;
    readonly clean: number;
    readonly classes: number;
    readonly impacts: Readonly<Record<Impact, number>>;
    readonly lowRails: number;
    readonly absentRails: number;
  };
  readonly missing: readonly NodeMissing[];
  readonly classes: readonly FleetClass[];
  /** Flagged nodes worst first, then the missing, then the clean ones by name. */
  readonly nodes: readonly NodeVerdict[];
  readonly problems: readonly string[];
  readonly exitCode: 0 | 1;
}

export interface ReportInput {
  readonly dir: string;
  readonly nodes: readonly ClassNode[];
  readonly classOf: (node: string) => string;
  readonly stats: readonly NodePathStat[];
  readonly missing: readonly NodeMissing[];
  readonly problems: readonly string[];
}

/** A rail below its class weighs as a major difference; a rail gone as a critical one (the adapter, most likely). */
const RAIL_IMPACT: Readonly<Record<RailFinding['kind'], Impact>> = { low: 'major', absent: 'critical' };

const worstOf = (xs: readonly Impact[]): Impact | null => xs.reduce<Impact | null>((w, x) => (w === null || IMPACT_RANK[x] < IMPACT_RANK[w] ? x : w), null);

export function buildFleetReport(i: ReportInput): FleetReport {
  const members = new Map<string, Set<string>>();
  const add = (node: string): void => {
    const c = i.classOf(node);
    let s = members.get(c);
    if (!s) members.set(c, (s = new Set()));
    s.add(node);
  };
  for (const n of i.nodes) add(n.node);
  for (const s of i.stats) add(s.node);
  const missingNames = new Set(i.missing.map((m) => m.node));
  const withSnapshot = new Set(i.nodes.map((n) => n.node));
  const withStats = new Set(i.stats.map((s) => s.node));
  const classes: FleetClass[] = [];
  const verdicts: NodeVerdict[] = [];
  for (const [name, set] of [...members].sort((a, b) => byNatural(a[0], b[0]))) {
    const names = [...set].sort(byNatural);
    const facts = classFacts(i.nodes.filter((n) => set.has(n.node)));
    const paths = distributions(i.stats, names);
    classes.push({ name, nodes: names, reference: facts.reference, facts: facts.facts, paths });
    const rails = new Map<string, RailFinding[]>();
    const push = (node: string, r: RailFinding): void => void rails.set(node, [...(rails.get(node) ?? []), r]);
    for (const p of paths) {
      if (!p.band) continue;
      const base = { probe: p.probe, rail: p.rail, direction: p.direction, recipeHash: p.recipeHash, median: p.band.median, low: p.band.low };
      for (const pt of p.points) if (pt.outlier === 'low') push(pt.node, { ...base, kind: 'low', p50: pt.p50, z: pt.z });
      for (const n of p.absent) push(n, { ...base, kind: 'absent', p50: null, z: null });
    }
    for (const node of names) {
      const differences = facts.byNode.get(node) ?? [];
      const rs = rails.get(node) ?? [];
      const notes = [
        ...(!withSnapshot.has(node) && !missingNames.has(node) ? ['no snapshot: bandwidth figures only'] : []),
        ...(withSnapshot.has(node) && !withStats.has(node) && i.stats.length > 0 ? ['no bandwidth figures'] : []),
      ];
      const worst = worstOf([...differences.map((d) => d.impact), ...rs.map((r) => RAIL_IMPACT[r.kind])]);
      verdicts.push({ node, class: name, status: worst === null ? 'ok' : 'differs', worst, differences, rails: rs, notes });
    }
  }
  for (const m of i.missing)
    if (!verdicts.some((v) => v.node === m.node)) verdicts.push({ node: m.node, class: i.classOf(m.node), status: 'missing', worst: null, differences: [], rails: [], notes: [m.why] });
  const rank = (v: NodeVerdict): number => (v.status === 'differs' ? IMPACT_RANK[v.worst!] : v.status === 'missing' ? 3 : 4);
  verdicts.sort((a, b) => rank(a) - rank(b) || b.differences.length + b.rails.length - (a.differences.length + a.rails.length) || byNatural(a.node, b.node));
  const flagged = verdicts.filter((v) => v.status === 'differs');
  const impacts: Record<Impact, number> = { critical: 0, major: 0, minor: 0 };
  for (const v of flagged) impacts[v.worst!]++;
  const allRails = flagged.flatMap((v) => v.rails);
  return {
    tool: 'gdrgate',
    command: 'fleet report',
    version: VERSION,
    dir: i.dir,
    summary: {
      nodes: verdicts.length,
      read: i.nodes.length,
      missing: i.missing.length,
      flagged: flagged.length,
      clean: verdicts.filter((v) => v.status === 'ok').length,
      classes: classes.length,
      impacts,
      lowRails: allRails.filter((r) => r.kind === 'low').length,
      absentRails: allRails.filter((r) => r.kind === 'absent').length,
    },
    missing: [...i.missing].sort((a, b) => byNatural(a.node, b.node)),
    classes,
    nodes: verdicts,
    problems: i.problems,
    exitCode: flagged.length > 0 || i.missing.length > 0 ? 1 : 0,
  };
}
