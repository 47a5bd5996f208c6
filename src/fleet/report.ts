// The fleet report: per class the facts' majority and who differs, per path the distribution and who is outside
// it, and per node one verdict, worst first. Pure: inputs in, the report out (JSON: schemas/fleet-report.schema.json).
import { IMPACT_RANK, type Difference, type Impact } from '../compare/types.js';
import { byNatural, byText } from '../model/order.js';
import { VERSION } from '../version.js';
import { isoTime } from './age.js';
import { distributions, MIN_NODES, type PathDistribution } from './bandwidth.js';
import { classFacts, type ClassFact, type ClassNode } from './facts.js';
import type { FactSource } from './read-one.js';
import type { NodeMissing, NodePathStat, WithheldPath } from './types.js';
import { gbps } from './text.js';

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

export type NodeStatus = 'ok' | 'differs' | 'incomplete' | 'unreadable' | 'missing';

/** A source of bandwidth figures and the nodes it had figures for; `error`: it gave none at all (every node lacks it). */
export interface FigureSource {
  readonly name: string;
  readonly nodes: ReadonlySet<string>;
  readonly error: string | null;
}

export interface NodeVerdict {
  readonly node: string;
  readonly class: string;
  /**
   * ok: judged, agrees with its class. differs: judged, differs. incomplete: judged on part of its inputs only (a
   * source had no data for it, an input of it could not be read or is older than --max-age). unreadable: every
   * input it has could not be read or used (too old). missing: named (fleet collect, a source) with no input at all.
   * Anything but ok makes the exit code 1.
   */
  readonly status: NodeStatus;
  readonly worst: Impact | null;
  /** a: this node's value, b: the class majority's. */
  readonly differences: readonly Difference[];
  readonly rails: readonly RailFinding[];
  /** What could not be judged and why: an input unreadable, a source without data for it, no snapshot. */
  readonly notes: readonly string[];
  /** Where its facts were judged from: the summary the node wrote beside its snapshot, or the snapshot; null: none read. */
  readonly source: FactSource | null;
  /** Why the node's summary was not used (stale, unreadable, invalid), when it had one: it was judged from its snapshot. */
  readonly sourceNote: string | null;
  /** When the snapshot its facts were judged from was taken (its manifest's time, ISO 8601); null: none judged, or no time recorded. */
  readonly snapshotTime: string | null;
}

export interface FleetClass {
  readonly name: string;
  readonly nodes: readonly string[];
  readonly reference: string | null;
  /** Nodes of the class whose snapshot was read: the facts' counts are out of these. */
  readonly read: number;
  /** Nodes of the class without a snapshot read, and why. */
  readonly unread: readonly NodeMissing[];
  readonly facts: readonly ClassFact[];
  readonly paths: readonly PathDistribution[];
}

/**
 * What the summary counts: nodes named and read; nodes by verdict (flagged: differs, clean: ok); classes; rails low
 * or absent on flagged nodes; nodes whose facts came from their summary, and from their snapshot (no summary, or one
 * not used).
 */
export type SummaryCount = 'nodes' | 'read' | 'missing' | 'unreadable' | 'incomplete' | 'flagged' | 'clean' | 'classes' | 'lowRails' | 'absentRails' | 'fromSummary' | 'fromSnapshot';

export interface FleetReport {
  readonly tool: 'gdrgate';
  readonly command: 'fleet report';
  readonly version: string;
  readonly dir: string;
  readonly summary: Readonly<Record<SummaryCount, number>> & { readonly impacts: Readonly<Record<Impact, number>> };
  /** Nodes not judged at all (unreadable, missing), and why. */
  readonly missing: readonly NodeMissing[];
  readonly classes: readonly FleetClass[];
  /** Flagged nodes worst first, then the incomplete, the unreadable, the missing, then the clean ones by name. */
  readonly nodes: readonly NodeVerdict[];
  readonly problems: readonly string[];
  /** 1 when a node is not ok, or when no node was judged at all. */
  readonly exitCode: 0 | 1;
}

/** A node read: its view, and where it came from (read.ts ReadNode). */
export type ReportNode = ClassNode & { readonly source?: FactSource; readonly note?: string | null; readonly time?: number | null };

export interface ReportInput {
  readonly dir: string;
  readonly nodes: readonly ReportNode[];
  readonly classOf: (node: string) => string;
  readonly stats: readonly NodePathStat[];
  /** Nodes named (fleet collect's summary) with no input in the directory. */
  readonly missing: readonly NodeMissing[];
  /** Inputs of a node that could not be used (a snapshot unreadable or not this node's, a spool unreadable, a source's bad series); several per node allowed. */
  readonly broken?: readonly NodeMissing[];
  /** Every source of figures asked (the spools when the directory holds any, Prometheus): a node one lacks is not fully judged. */
  readonly sources?: readonly FigureSource[];
  /** Paths whose figure was not judged for its age (its node says why): the node is never "absent" on them. */
  readonly withheld?: readonly WithheldPath[];
  /** Nodes whose figures are not all known (a spool file not read, corrupt lines; said in `broken`): never "absent". */
  readonly unsure?: readonly string[];
  readonly problems: readonly string[];
  /** How many of `problems` are inputs not taken (a file name refused, the collect summary unreadable): exit 1. */
  readonly refused?: number;
}

/** A rail below its class weighs as a major difference; a rail gone as a critical one (the adapter, most likely). */
const RAIL_IMPACT: Readonly<Record<RailFinding['kind'], Impact>> = { low: 'major', absent: 'critical' };

const worstOf = (xs: readonly Impact[]): Impact | null => xs.reduce<Impact | null>((w, x) => (w === null || IMPACT_RANK[x] < IMPACT_RANK[w] ? x : w), null);

const STATUS_RANK: Readonly<Record<Exclude<NodeStatus, 'differs'>, number>> = { incomplete: 3, unreadable: 4, missing: 5, ok: 6 };

export function buildFleetReport(i: ReportInput): FleetReport {
  const members = new Map<string, Set<string>>();
  const add = (node: string): void => {
    const c = i.classOf(node);
    let s = members.get(c);
    if (!s) members.set(c, (s = new Set()));
    s.add(node);
  };
  const broken = new Map<string, string[]>();
  for (const b of i.broken ?? []) {
    const l = broken.get(b.node);
    if (l) l.push(b.why);
    else broken.set(b.node, [b.why]);
  }
  const named = new Map<string, string>();
  for (const m of i.missing) if (!named.has(m.node)) named.set(m.node, m.why);
  // Every node named anywhere is a member of its class, and gets a verdict.
  for (const n of i.nodes) add(n.node);
  for (const s of i.stats) add(s.node);
  for (const n of broken.keys()) add(n);
  for (const n of named.keys()) add(n);
  const readBy = new Map(i.nodes.map((n) => [n.node, n]));
  const withSnapshot = new Set(readBy.keys());
  const withStats = new Set(i.stats.map((s) => s.node));
  const sources = i.sources ?? [];
  const classes: FleetClass[] = [];
  const verdicts: NodeVerdict[] = [];
  const unjudged: NodeMissing[] = [];
  // Nodes, figures and withheld paths by class, split once: a class reads its own, never every class's (classes × figures).
  const byClassOf = <T extends { readonly node: string }>(xs: readonly T[]): Map<string, T[]> => {
    const m = new Map<string, T[]>();
    for (const x of xs) {
      const c = i.classOf(x.node);
      const l = m.get(c);
      if (l) l.push(x);
      else m.set(c, [x]);
    }
    return m;
  };
  const byClass = byClassOf<ClassNode>(i.nodes);
  const statsOf = byClassOf<NodePathStat>(i.stats);
  const withheldOf = byClassOf<WithheldPath>(i.withheld ?? []);
  const unsure = new Set(i.unsure ?? []);
  for (const [name, set] of [...members].sort((a, b) => byNatural(a[0], b[0]))) {
    const names = [...set].sort(byNatural);
    const facts = classFacts(byClass.get(name) ?? []);
    const paths = distributions(statsOf.get(name) ?? [], names, withheldOf.get(name), unsure);
    const rails = new Map<string, RailFinding[]>();
    const push = (node: string, r: RailFinding): void => {
      const l = rails.get(node);
      if (l) l.push(r);
      else rails.set(node, [r]);
    };
    // What a node is not judged on, said on it (incomplete): a fact with no majority, a path with no clear one.
    const tiedNote = new Map<string, string[]>();
    // Appended in place: a node with many notes costs one push each, never a copy of its list so far.
    const noteOn = (node: string, note: string): void => {
      const l = tiedNote.get(node);
      if (l) l.push(note);
      else tiedNote.set(node, [note]);
    };
    // A path fewer than MIN_NODES nodes measured has no band: its nodes are not judged there (two that disagree have
    // no deviant side, as a tied fact), and each says so, once, naming the first such path.
    const unbanded = new Map<string, { readonly first: string; n: number }>();
    for (const p of paths) {
      if (!p.band) {
        for (const pt of p.points) {
          const u = unbanded.get(pt.node);
          if (u) u.n++;
          else unbanded.set(pt.node, { first: `${p.probe} ${p.rail} ${p.direction}`, n: 1 });
        }
        continue;
      }
      if (p.band.unclear) {
        // A loop, not Math.min(...xs): past about 120,000 arguments a spread call throws RangeError.
        let [lo, hi] = [Infinity, -Infinity];
        for (const pt of p.points) [lo, hi] = [Math.min(lo, pt.p50), Math.max(hi, pt.p50)];
        const note = `no clear majority on ${p.probe} ${p.rail} ${p.direction}: figures from ${gbps(lo)} to ${gbps(hi)} around a median of ${gbps(p.band.median)}: not judged`;
        for (const pt of p.points) noteOn(pt.node, note);
        continue;
      }
      const base = { probe: p.probe, rail: p.rail, direction: p.direction, recipeHash: p.recipeHash, median: p.band.median, low: p.band.low };
      for (const pt of p.points) if (pt.outlier === 'low') push(pt.node, { ...base, kind: 'low', p50: pt.p50, z: pt.z });
      for (const n of p.absent) push(n, { ...base, kind: 'absent', p50: null, z: null });
    }
    for (const [node, u] of unbanded) {
      const more = u.n > 1 ? ` and ${u.n - 1} more path(s)` : '';
      noteOn(node, `${u.first}${more}: measured by fewer than ${MIN_NODES} nodes of the class, no band: not judged`);
    }
    const classRead = names.filter((n) => withSnapshot.has(n)).length;
    const unread: NodeMissing[] = [];
    // A fact with no majority (two values held by as many nodes each): neither side is the deviant, so neither is
    // judged on it; each node holding one of the tied values says so (incomplete), never `ok` for the side the
    // reference happened to be on. A third value, held by fewer, still differs.
    const tiedOut = new Map<string, Set<string>>();
    for (const f of facts.facts.filter((x) => x.tie)) {
      const held = new Map<string, string[]>([[f.majority, []]]);
      for (const d of f.deviations) {
        const l = held.get(d.value);
        if (l) l.push(d.node);
        else held.set(d.value, [d.node]);
      }
      // The majority shown (the reference's) first, the other tied values by text: never in the order of the names holding them.
      const top = [f.majority, ...[...held].filter(([v, ns]) => v !== f.majority && ns.length === f.agree).map(([v]) => v).sort(byText)];
      const note = `no majority on ${f.area} ${f.subject}: ${top.map((v) => `${v} on ${f.agree}`).join(', ')} of ${classRead}: not judged`;
      // Each node's value looked up, never searched for: a tie of thousands against thousands is not names × deviations.
      const deviant = new Map<string, string>();
      for (const d of f.deviations) if (!deviant.has(d.node)) deviant.set(d.node, d.value);
      for (const n of names) {
        const v = deviant.get(n) ?? (withSnapshot.has(n) ? f.majority : null);
        if (v === null || !top.includes(v)) continue;
        noteOn(n, note);
        if (v !== f.majority) tiedOut.set(n, (tiedOut.get(n) ?? new Set()).add(`${f.area}\u0000${f.subject}`));
      }
    }
    for (const node of names) {
      const hasSnap = withSnapshot.has(node);
      const hasStats = withStats.has(node);
      const why = broken.get(node) ?? [];
      const notes = [...why, ...(tiedNote.get(node) ?? [])];
      if (!hasSnap && why.length === 0 && classRead > 0) notes.push(named.get(node) ?? 'no snapshot: its facts are not judged');
      for (const src of sources) {
        if (src.error !== null) notes.push(`no data from ${src.name}: ${src.error}`);
        else if (!src.nodes.has(node)) notes.push(`no data from ${src.name}`);
      }
      if (!hasSnap) unread.push({ node, why: notes[0] ?? named.get(node) ?? 'no snapshot' });
      const differences = (facts.byNode.get(node) ?? []).filter((d) => !tiedOut.get(node)?.has(`${d.area}\u0000${d.subject}`));
      const rs = rails.get(node) ?? [];
      const worst = worstOf([...differences.map((d) => d.impact), ...rs.map((r) => RAIL_IMPACT[r.kind])]);
      const status: NodeStatus = !hasSnap && !hasStats ? (why.length ? 'unreadable' : 'missing') : worst !== null ? 'differs' : notes.length ? 'incomplete' : 'ok';
      if (status === 'unreadable' || status === 'missing') unjudged.push({ node, why: why.length ? why.join('; ') : (named.get(node) ?? 'no input') });
      const r = readBy.get(node);
      verdicts.push({ node, class: name, status, worst, differences, rails: rs, notes, source: r ? (r.source ?? 'snapshot') : null, sourceNote: r?.note ?? null, snapshotTime: typeof r?.time === 'number' ? isoTime(r.time) : null });
    }
    classes.push({ name, nodes: names, reference: facts.reference, read: classRead, unread, facts: facts.facts, paths });
  }
  const rank = (v: NodeVerdict): number => (v.status === 'differs' ? IMPACT_RANK[v.worst!] : STATUS_RANK[v.status]);
  verdicts.sort((a, b) => rank(a) - rank(b) || b.differences.length + b.rails.length - (a.differences.length + a.rails.length) || byNatural(a.node, b.node));
  const flagged = verdicts.filter((v) => v.status === 'differs');
  const impacts: Record<Impact, number> = { critical: 0, major: 0, minor: 0 };
  for (const v of flagged) impacts[v.worst!]++;
  const allRails = flagged.flatMap((v) => v.rails);
  const count = (st: NodeStatus): number => verdicts.filter((v) => v.status === st).length;
  return {
    tool: 'gdrgate',
    command: 'fleet report',
    version: VERSION,
    dir: i.dir,
    summary: {
      nodes: verdicts.length,
      read: i.nodes.length,
      missing: count('missing'),
      unreadable: count('unreadable'),
      incomplete: count('incomplete'),
      flagged: flagged.length,
      clean: count('ok'),
      classes: classes.length,
      impacts,
      lowRails: allRails.filter((r) => r.kind === 'low').length,
      absentRails: allRails.filter((r) => r.kind === 'absent').length,
      fromSummary: verdicts.filter((v) => v.source === 'summary').length,
      fromSnapshot: verdicts.filter((v) => v.source === 'snapshot').length,
    },
    missing: unjudged.sort((a, b) => byNatural(a.node, b.node)),
    classes,
    nodes: verdicts,
    problems: i.problems,
    // Nothing judged (an empty directory, every name refused, the only source unreachable) is never a healthy fleet.
    exitCode: verdicts.length === 0 || verdicts.some((v) => v.status !== 'ok') || (i.refused ?? 0) > 0 ? 1 : 0,
  };
}
