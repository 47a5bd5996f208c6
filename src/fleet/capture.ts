// `baseline capture --from-fleet DIR`: a class baseline taken from the fleet's majority instead of one node. The
// devices and settings are those of the class's reference node (the one agreeing with the majority on every fact,
// facts.ts), the bandwidth bands come from the distribution of node p50s across the class (robust.ts); the nodes
// that disagreed are listed beside it, never folded in.
import { captureClass } from '../baseline/capture.js';
import type { Difference } from '../compare/types.js';
import { UsageError } from '../errors.js';
import type { BaselineClass, BaselineEnvelope } from '../model/baseline.js';
import { MIN_NODES } from './bandwidth.js';
import { band, OUTLIER_Z } from './robust.js';
import { compressHostlist } from './hostlist.js';
import { readSnapshotNode } from './read-one.js';
import type { FleetRun } from './report-command.js';
import type { FleetClass, NodeVerdict } from './report.js';
import { BYTES_PER_SECOND } from '../samples/sample.js';

/** The band's warn line sits this many spreads below the median; fail at the outlier line (OUTLIER_Z). */
export const WARN_Z = 3;

export interface FleetCaptureOptions {
  readonly name: string;
  /** Which class of the report (default: the largest). */
  readonly fromClass?: string | undefined;
  readonly match?: readonly string[] | undefined;
  readonly platform: 'bare-metal' | 'virtualized';
  readonly at: string;
}

export interface FleetCapture {
  readonly cls: BaselineClass;
  readonly reference: string;
  readonly nodes: number;
  readonly disagreed: readonly { readonly node: string; readonly differences: readonly Difference[]; readonly rails: number }[];
  readonly warnings: readonly string[];
}

export function pickClass(run: FleetRun, name: string | undefined): FleetClass {
  const cs = run.report.classes.filter((c) => c.reference !== null);
  const c = name === undefined ? [...cs].sort((a, b) => b.nodes.length - a.nodes.length)[0] : cs.find((k) => k.name === name);
  if (!c) throw new UsageError(name === undefined ? `${run.report.dir}: no node snapshot to take a class from` : `--from-class ${name}: no such class in ${run.report.dir} (${cs.map((k) => k.name).join(', ')})`);
  return c;
}

/**
 * The class's bands: per path with a known recipe, median and warn/fail lines in the samples' unit, drawn from the
 * figures of the nodes that agreed with the class only (a node that differs, on a fact or a rail, is never folded in).
 */
function envelopes(run: FleetRun, c: FleetClass, differs: ReadonlySet<string>, warnings: string[]): BaselineEnvelope[] {
  const out: BaselineEnvelope[] = [];
  for (const p of c.paths) {
    const r = run.spools.recipes.get(p.recipeHash);
    const xs = p.points.filter((x) => !differs.has(x.node)).map((x) => x.p50);
    const b = xs.length >= MIN_NODES ? band(xs) : null;
    if (!b || !r) {
      warnings.push(`${p.probe} ${p.rail}: ${!b ? 'too few nodes that agree with the class for a band' : 'no recipe (figures not from a spool)'}, no envelope`);
      continue;
    }
    const per = BYTES_PER_SECOND[r.unit];
    const inUnit = (x: number): number => Math.max(0, Math.round((x / per) * 100) / 100);
    out.push({
      probe: p.probe,
      gpu: p.gpu,
      nic: p.nic,
      direction: p.direction,
      recipe: r.recipe,
      unit: r.unit,
      p50: inUnit(b.median),
      samples: b.n,
      warnBelow: inUnit(b.median - WARN_Z * b.sigma),
      failBelow: inUnit(b.median - OUTLIER_Z * b.sigma),
    });
  }
  return out;
}

/**
 * The node whose devices and settings the class takes: one the fleet did not flag (no difference from the majority,
 * no rail outside its band), the facts' reference when it is one; none is an error, never a flagged node's values.
 */
export function cleanReference(run: FleetRun, c: FleetClass): string {
  const verdicts = new Map<string, NodeVerdict>(run.report.nodes.filter((v) => v.class === c.name).map((v) => [v.node, v]));
  const read = new Set(run.nodes.map((n) => n.node));
  const agrees = (n: string): boolean => read.has(n) && verdicts.get(n)?.differences.length === 0 && verdicts.get(n)?.rails.length === 0;
  const order = [...(c.reference === null ? [] : [c.reference]), ...c.nodes];
  const ok = order.find((n) => agrees(n) && verdicts.get(n)?.status === 'ok') ?? order.find(agrees);
  if (ok !== undefined) return ok;
  const closest = c.reference === null ? undefined : verdicts.get(c.reference);
  throw new UsageError(
    `class ${c.name}: every node whose snapshot was read differs from the class (on a fact or a rail): no node to take the class from${closest ? `; the closest, ${closest.node}, differs on ${[...closest.differences.map((d) => `${d.area} ${d.subject}`), ...closest.rails.map((r) => `bandwidth ${r.rail}`)].join(', ')}` : ''}`,
  );
}

export async function captureFromFleet(run: FleetRun, o: FleetCaptureOptions): Promise<FleetCapture> {
  const c = pickClass(run, o.fromClass);
  const ref = run.nodes.find((n) => n.node === cleanReference(run, c))!;
  // The report compared views (a summary's or the snapshot's); the class is taken from the snapshot itself.
  const got = await readSnapshotNode(ref.node, ref.file);
  if ('why' in got) throw new UsageError(`class ${c.name}: the reference node ${ref.node}'s snapshot cannot be read now: ${got.why}`);
  const warnings: string[] = [];
  const differs = new Set(run.report.nodes.filter((v) => v.class === c.name && v.status === 'differs').map((v) => v.node));
  const probes = envelopes(run, c, differs, warnings);
  const captured = captureClass(got.inv, {
    name: o.name,
    match: o.match?.length ? o.match : compressHostlist(c.nodes),
    platform: o.platform,
    at: o.at,
    ...(probes.length ? { probes } : {}),
  });
  const cls: BaselineClass = { ...captured.cls, captured: { ...captured.cls.captured, host: `majority of ${c.nodes.length} nodes (as on ${ref.node})` } };
  const disagreed = run.report.nodes
    .filter((v) => v.class === c.name && v.status === 'differs')
    .map((v) => ({ node: v.node, differences: v.differences, rails: v.rails.length }));
  return { cls, reference: ref.node, nodes: c.nodes.length, disagreed, warnings: [...captured.warnings.filter((w) => !w.includes('runs at')), ...warnings] };
}
