// The class's majority for every fact `compare` extracts, and the nodes that differ from it, ranked as compare ranks
// them. Facts come from compare itself: every node is compared with one reference node; a fact a node does not
// differ on has the reference's value, and what the universal rules flag on the reference alone counts as a
// difference of each node without it. When the reference is in the minority on some fact, the node agreeing with
// the majority on most facts becomes the reference and the comparison is made again, so the differences (and their
// impact) are those of each node against the majority. Each node comes as its compare view (compare/view.ts, from
// its summary or its snapshot); nodes of one view key (digest.ts) are compared once per key.
import { compareViewsBothWays } from '../compare/compare.js';
import { compareAreas, sortDifferences } from '../compare/order.js';
import { IMPACT_RANK, type Area, type Difference, type Impact } from '../compare/types.js';
import type { CompareView } from '../compare/view.js';
import { byNatural, byText } from '../model/order.js';
import { viewKey } from './digest.js';

export interface ClassNode {
  readonly node: string;
  readonly view: CompareView;
  /** Nodes of one key hold alike everything compare and the fingerprint read (digest.ts); absent: compared alone. */
  readonly key?: string;
}

export interface Deviation {
  readonly node: string;
  readonly value: string;
  readonly impact: Impact;
  readonly response: string;
}

export interface ClassFact {
  readonly area: Area;
  readonly subject: string;
  readonly majority: string;
  /** Nodes holding the majority value. */
  readonly agree: number;
  /** Two values held by as many nodes each: the majority shown is the reference node's. */
  readonly tie: boolean;
  /** The worst impact among the deviations. */
  readonly impact: Impact;
  readonly deviations: readonly Deviation[];
}

export interface ClassFacts {
  /** The node whose values are the majority's (or closest to it); null for an empty class. */
  readonly reference: string | null;
  /** Only facts on which some node differs, worst first. */
  readonly facts: readonly ClassFact[];
  /** Each differing node's differences from the majority, worst first (compare's order). */
  readonly byNode: ReadonlyMap<string, readonly Difference[]>;
}

const factKey = (d: Difference): string => `${d.area}\u0000${d.subject}`;

interface Pass {
  readonly ref: ClassNode;
  readonly diffs: Map<string, Map<string, Difference>>;
  /** Per fact: the reference's value. */
  readonly refValue: Map<string, string>;
}

/** What one node shows against one side of the reference on a fact: its texts (one, or more that compare gave alike), the worst. */
interface Part {
  readonly as: string[];
  worst: Difference;
}

function pass(nodes: readonly ClassNode[], ref: ClassNode): Pass {
  // compareViews is pure: one call per key answers for every node of the key.
  const byKey = new Map<string, Difference[]>();
  // A finding of the universal rules on the reference and not on the node (the reference is any node, never known
  // good: it may be the faulty one) is a difference of the node's too, its value the other side's text: the tally
  // then puts the reference in the minority and the next pass makes a node without it the reference.
  const both = (n: ClassNode): Difference[] => {
    const r = compareViewsBothWays(n.view, ref.view);
    return [...r.differences, ...r.onReference.map((d) => ({ ...d, a: d.b, b: d.a }))];
  };
  const compared = (n: ClassNode): Difference[] => {
    if (n.key === undefined) return both(n);
    let ds = byKey.get(n.key);
    if (!ds) byKey.set(n.key, (ds = both(n)));
    return ds;
  };
  // A fact may carry more than one difference (a port the kernel throttles is a throttle and a slower link; a device
  // missing and moved), and a node may show only some of them: one node's port throttled and slower, another's only
  // slower. Each difference's reference side (its b) is the reference's own text of one part of the fact, so the fact's
  // value is made of every part any node differs on, in one order for the class (worst first, then by text): the
  // reference's value is its texts of all of them, each node's its own text where it differs and the reference's
  // where it does not. So every node's value reads in the same parts whichever nodes differ, and whatever their names.
  const raw = new Map<string, Map<string, Map<string, Part>>>();
  const sides = new Map<string, Map<string, number>>();
  for (const n of nodes) {
    if (n === ref) continue;
    const mine = new Map<string, Map<string, Part>>();
    for (const d of compared(n)) {
      const k = factKey(d);
      let parts = mine.get(k);
      if (!parts) mine.set(k, (parts = new Map()));
      const had = parts.get(d.b);
      if (!had) parts.set(d.b, { as: [d.a], worst: d });
      else {
        had.as.push(d.a);
        if (IMPACT_RANK[d.impact] < IMPACT_RANK[had.worst.impact]) had.worst = d;
      }
      let side = sides.get(k);
      if (!side) sides.set(k, (side = new Map()));
      side.set(d.b, Math.min(side.get(d.b) ?? IMPACT_RANK.minor, IMPACT_RANK[d.impact]));
    }
    if (mine.size) raw.set(n.node, mine);
  }
  const order = new Map([...sides].map(([k, side]) => [k, [...side].sort((x, y) => x[1] - y[1] || byText(x[0], y[0])).map(([b]) => b)] as const));
  const refValue = new Map([...order].map(([k, bs]) => [k, bs.join('; ')] as const));
  const diffs = new Map<string, Map<string, Difference>>();
  for (const [node, mine] of raw) {
    const out = new Map<string, Difference>();
    for (const [k, parts] of mine) {
      const bs = order.get(k)!;
      let worst: Difference | null = null;
      for (const b of bs) {
        const w = parts.get(b)?.worst;
        if (w && (worst === null || IMPACT_RANK[w.impact] < IMPACT_RANK[worst.impact])) worst = w;
      }
      const a = bs.map((b) => parts.get(b)?.as.sort(byText).join('; ') ?? b).join('; ');
      out.set(k, { impact: worst!.impact, area: worst!.area, subject: worst!.subject, a, b: refValue.get(k)!, response: worst!.response });
    }
    diffs.set(node, out);
  }
  return { ref, diffs, refValue };
}

/** Per fact, how many nodes hold each value. */
function tally(nodes: readonly ClassNode[], p: Pass): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const [k, rv] of p.refValue) {
    const counts = new Map<string, number>();
    for (const n of nodes) {
      const v = p.diffs.get(n.node)?.get(k)?.a ?? rv;
      counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    out.set(k, counts);
  }
  return out;
}

/** The most held value; on a tie the reference's, then the first in text order. */
function majorityOf(counts: Map<string, number>, refValue: string): { value: string; count: number; tie: boolean } {
  const ranked = [...counts].sort((x, y) => y[1] - x[1] || (x[0] === refValue ? -1 : y[0] === refValue ? 1 : byText(x[0], y[0])));
  const [value, count] = ranked[0]!;
  return { value, count, tie: ranked.length > 1 && ranked[1]![1] === count };
}

/**
 * A node's view key (digest.ts): what decides between candidates for the reference that are otherwise equal. Never a
 * name: the reference's view sets the texts the class is judged in and the value shown first on a tie, so a node's
 * name would decide what the report says. Between nodes of one key the first by name is taken, for its name only:
 * their views are alike, and so is every comparison with them.
 */
function keys(nodes: readonly ClassNode[]): (n: ClassNode) => string {
  const made = new Map<ClassNode, string>();
  return (n) => {
    if (n.key !== undefined) return n.key;
    let k = made.get(n);
    if (k === undefined) made.set(n, (k = viewKey(n.view)));
    return k;
  };
}

/** How many of the nodes hold each value. */
function counts(nodes: readonly ClassNode[], valueOf: (n: ClassNode) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const n of nodes) out.set(valueOf(n), (out.get(valueOf(n)) ?? 0) + 1);
  return out;
}

/**
 * The first reference: a node of the most common fingerprint (a few facts read without comparing), of those one of
 * the most common view, so the comparison against it rarely needs a second pass; of several alike, the least view key.
 */
function firstReference(nodes: readonly ClassNode[], keyOf: (n: ClassNode) => string): ClassNode {
  const [fp, views] = [counts(nodes, (n) => n.view.fingerprint), counts(nodes, keyOf)];
  const rank = (n: ClassNode): [number, number] => [fp.get(n.view.fingerprint)!, views.get(keyOf(n))!];
  let best = nodes[0]!;
  for (const n of nodes) {
    const [[f, v], [bf, bv]] = [rank(n), rank(best)];
    if (f > bf || (f === bf && (v > bv || (v === bv && byText(keyOf(n), keyOf(best)) < 0)))) best = n;
  }
  return best;
}

export function classFacts(input: readonly ClassNode[]): ClassFacts {
  const nodes = [...input].sort((a, b) => byNatural(a.node, b.node));
  if (nodes.length === 0) return { reference: null, facts: [], byNode: new Map() };
  const keyOf = keys(nodes);
  let p = pass(nodes, firstReference(nodes, keyOf));
  let t = tally(nodes, p);
  const minority = [...t].filter(([k, c]) => majorityOf(c, p.refValue.get(k)!).value !== p.refValue.get(k));
  if (minority.length) {
    // The node agreeing with the majority on most facts becomes the reference; of several, the least view key.
    const major = new Map([...t].map(([k, c]) => [k, majorityOf(c, p.refValue.get(k)!).value]));
    const agreeing = (n: ClassNode): number => [...major].filter(([k, v]) => (p.diffs.get(n.node)?.get(k)?.a ?? p.refValue.get(k)) === v).length;
    let best = nodes[0]!;
    let score = agreeing(best);
    for (const n of nodes) {
      const s = agreeing(n);
      if (s > score || (s === score && byText(keyOf(n), keyOf(best)) < 0)) [best, score] = [n, s];
    }
    p = pass(nodes, best);
    t = tally(nodes, p);
  }
  const facts: ClassFact[] = [];
  const byNode = new Map<string, Difference[]>();
  for (const [k, counts] of t) {
    const rv = p.refValue.get(k)!;
    const m = majorityOf(counts, rv);
    const [area, subject] = k.split('\u0000') as [Area, string];
    const deviations: Deviation[] = [];
    for (const n of nodes) {
      const d = p.diffs.get(n.node)?.get(k);
      const value = d?.a ?? rv;
      if (value === m.value) continue;
      // A node holding the reference's value where the reference is still in the minority: the impact the other
      // way round (the majority's nodes against it) is the one compare gave.
      const other = d ?? firstDiff(p, k, m.value);
      const impact = other?.impact ?? 'minor';
      const response = other?.response ?? '';
      deviations.push({ node: n.node, value, impact, response });
      const mine = byNode.get(n.node) ?? [];
      mine.push({ impact, area, subject, a: value, b: m.value, response });
      byNode.set(n.node, mine);
    }
    if (!deviations.length) continue;
    const impact = deviations.reduce<Impact>((w, d) => (IMPACT_RANK[d.impact] < IMPACT_RANK[w] ? d.impact : w), 'minor');
    facts.push({ area, subject, majority: m.value, agree: m.count, tie: m.tie, impact, deviations });
  }
  const order = new Map<string, number>(compareAreas().map((a, i) => [a, i]));
  facts.sort((x, y) => IMPACT_RANK[x.impact] - IMPACT_RANK[y.impact] || order.get(x.area)! - order.get(y.area)! || byNatural(x.subject, y.subject));
  const sorted = new Map([...byNode].map(([n, ds]) => [n, sortDifferences(ds)] as const));
  return { reference: p.ref.node, facts, byNode: sorted };
}

function firstDiff(p: Pass, k: string, value: string): Difference | undefined {
  for (const m of p.diffs.values()) {
    const d = m.get(k);
    if (d && d.a === value) return d;
  }
  return undefined;
}
