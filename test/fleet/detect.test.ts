// The fleet judge on a generated fleet of one class with faults injected on known nodes: every fault is found, on
// the node it was injected on, in the area it belongs to, and no clean node is flagged. The report validates.
import t, { type Test } from 'tap';
import { runFleetReport } from '../../src/fleet/report-command.js';
import type { FleetReport, NodeVerdict } from '../../src/fleet/report.js';
import { FAULTS, generateFleet, gpuBdf, type GenFleetNode } from '../gen/fleet.js';
import { validate } from '../helpers/schema.js';
import { band, outlier } from '../../src/fleet/robust.js';

/** What the report must say of a node with this fault. */
function found(v: NodeVerdict | undefined, n: GenFleetNode): string | null {
  const f = n.fault!;
  if (!v || v.status !== 'differs') return `${n.name} (${f.kind}) not flagged`;
  const has = (area: string, pred: (a: string) => boolean = () => true): boolean => v.differences.some((d) => d.area === area && pred(d.a));
  const lowRail = v.rails.some((r) => r.kind === 'low' && r.rail === `${gpuBdf(f.rail)}↔mlx5_${f.rail}`);
  const ok =
    f.kind === 'link-x8' ? has('link-width', (a) => a.endsWith('x8')) && lowRail
    : f.kind === 'acs-redirect' ? has('acs', (a) => a.includes('ReqRedir+'))
    : f.kind === 'firmware' ? v.differences.some((d) => d.area === 'firmware' && d.subject === `mlx5_${f.rail}`)
    : f.kind === 'missing-nic' ? v.differences.some((d) => d.area === 'device' && d.subject === `mlx5_${f.rail}` && d.a === 'missing') && v.rails.some((r) => r.kind === 'absent')
    : lowRail && v.differences.length === 0;
  return ok ? null : `${n.name} (${JSON.stringify(f)}) flagged without its own finding: ${JSON.stringify(v)}`;
}

function judged(t: Test, report: FleetReport, plan: readonly GenFleetNode[]): void {
  const byNode = new Map(report.nodes.map((v) => [v.node, v]));
  const misses = plan.filter((n) => n.fault).map((n) => found(byNode.get(n.name), n)).filter((x): x is string => x !== null);
  t.same(misses, [], 'every injected fault found on its node');
  const falsePositives = plan.filter((n) => !n.fault && byNode.get(n.name)?.status !== 'ok').map((n) => n.name);
  t.same(falsePositives, [], 'no clean node flagged');
  t.equal(report.summary.flagged, plan.filter((n) => n.fault).length);
}

t.test('60 nodes, every fault kind at least once: all found, none invented, schema-valid JSON', async (t) => {
  const dir = t.testdir();
  const plan = await generateFleet(dir, { n: 60, seed: 21 });
  t.same(new Set(plan.flatMap((n) => (n.fault ? [n.fault.kind] : []))), new Set(FAULTS), 'each kind injected');
  const { report } = await runFleetReport({ dir, baseline: null });
  judged(t, report, plan);
  t.equal(report.exitCode, 1);
  t.equal(report.summary.read, 60);
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(report))), [], 'validates against schemas/fleet-report.schema.json');
  const cls = report.classes[0]!;
  t.notOk(plan.find((n) => n.name === cls.reference)?.fault, `the majority's reference ${cls.reference} is a clean node`);
  // Worst first: no node after a major one is critical.
  const ranks = report.nodes.filter((v) => v.status === 'differs').map((v) => ['critical', 'major', 'minor'].indexOf(v.worst!));
  t.same(ranks, [...ranks].sort((a, b) => a - b), 'flagged nodes worst first');
});

t.test('a weak rail stands out though the node mean over its rails is within the spread of the other nodes', async (t) => {
  const dir = t.testdir();
  const plan = await generateFleet(dir, { n: 30, seed: 5, rates: { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0.05 } });
  const weak = plan.filter((n) => n.fault).map((n) => n.name);
  const { report } = await runFleetReport({ dir, baseline: null });
  judged(t, report, plan);
  const points = report.classes[0]!.paths.flatMap((p) => p.points);
  const meanOf = (node: string): number => {
    const xs = points.filter((p) => p.node === node).map((p) => p.p50);
    return xs.reduce((a, x) => a + x, 0) / xs.length;
  };
  // Judged by its mean over the 8 rails against the class's band of node means, the node would pass.
  const means = band(plan.map((n) => meanOf(n.name)))!;
  for (const w of weak) t.equal(outlier(means, meanOf(w)), null, `${w}: mean ${(meanOf(w) / 1e9).toFixed(2)} GB/s is inside the band of node means (from ${(means.low / 1e9).toFixed(2)})`);
});

t.test('an unreadable snapshot is a missing node, listed; the others are still judged', async (t) => {
  const dir = t.testdir();
  const plan = await generateFleet(dir, { n: 12, seed: 3, rates: { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 } });
  const { writeFileSync } = await import('node:fs');
  writeFileSync(`${dir}/gpu0099.tar.gz`, 'not a tar');
  writeFileSync(`${dir}/bad name!.tar.gz`, '');
  const { report } = await runFleetReport({ dir, baseline: null });
  t.same(report.missing.map((m) => m.node), ['gpu0099']);
  t.equal(report.missing[0]!.why, `${dir}/gpu0099.tar.gz: not a snapshot archive: truncated archive: partial header at offset 0`);
  t.ok(report.problems.some((p) => p.includes('bad name!.tar.gz')), 'a file that is not a node name is said');
  t.equal(report.summary.flagged, 0, `none of ${plan.length} clean nodes flagged`);
  t.equal(report.exitCode, 1, 'a node missing makes the exit 1');
});

t.test('no such directory: a usage error', async (t) => {
  await t.rejects(runFleetReport({ dir: '/nonexistent/fleet', baseline: null }), { name: /^UsageError$/, message: /no such directory/ });
});
