// Node summaries (src/fleet/summary.ts): on a realistic fleet (every snapshot distinct) the report judges each node
// from the summary it wrote, with the same verdicts as from the snapshots; every way a summary can be stale or
// broken makes the report read that node's snapshot instead and say why for that node; a summary is trusted only
// through its digest, so it is what the report reads first.
import t from 'tap';
import { copyFileSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { VIEW_VERSION } from '../../src/compare/view.js';
import { runFleetReport } from '../../src/fleet/report-command.js';
import type { FleetReport } from '../../src/fleet/report.js';
import { sha256 } from '../../src/fleet/summary.js';
import { FAULTS, gpuBdf } from '../gen/fleet.js';
import { generateRealFleet, realSnapshot } from '../gen/fleet-real.js';
import { validate } from '../helpers/schema.js';

const CLEAN = { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 };

/** What a verdict says, without where it came from. */
const judged = (r: FleetReport): unknown[] => r.nodes.map((v) => ({ node: v.node, status: v.status, worst: v.worst, differences: v.differences, rails: v.rails, notes: v.notes }));

t.test('a realistic fleet of 40: every snapshot distinct; judged from the summaries, as from the snapshots; every fault found, no clean node flagged', async (t) => {
  const dir = t.testdir();
  const plan = await generateRealFleet(dir, { n: 40, seed: 9, summaries: true });
  t.same(new Set(plan.flatMap((n) => (n.fault ? [n.fault.kind] : []))), new Set(FAULTS), 'each fault kind injected');
  const snaps = readdirSync(dir).filter((f) => f.endsWith('.tar.gz'));
  t.equal(new Set(snaps.map((f) => sha256(readFileSync(path.join(dir, f))))).size, 40, 'no two snapshots alike');
  const summary = JSON.parse(readFileSync(path.join(dir, 'gpu0001.summary.json'), 'utf8')) as unknown;
  t.same(validate('fleet-summary', summary), [], 'a summary validates against schemas/fleet-summary.schema.json');
  const { report } = await runFleetReport({ dir, baseline: null });
  t.same(report.nodes.map((v) => v.source), plan.map(() => 'summary'), 'every node judged from its summary');
  t.same([report.summary.fromSummary, report.summary.fromSnapshot], [40, 0]);
  const status = new Map(report.nodes.map((v) => [v.node, v]));
  t.same(plan.filter((n) => n.fault && status.get(n.name)?.status !== 'differs').map((n) => n.name), [], 'every injected fault found');
  t.same(plan.filter((n) => !n.fault && status.get(n.name)?.status !== 'ok').map((n) => n.name), [], 'no clean node flagged');
  const fw = plan.find((n) => n.fault?.kind === 'firmware')!;
  t.same(status.get(fw.name)?.differences.map((d) => `${d.area} ${d.subject} ${d.a}`), [`firmware mlx5_${fw.fault!.rail} 28.40.1000`], 'the firmware fault by its fact');
  const x8 = plan.find((n) => n.fault?.kind === 'link-x8')!;
  t.ok(status.get(x8.name)?.rails.some((r) => r.kind === 'low' && r.rail === `${gpuBdf(x8.fault!.rail)}↔mlx5_${x8.fault!.rail}`), 'the x8 rail low');
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(report))), [], 'the report validates');
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.summary.json'))) rmSync(path.join(dir, f));
  const fromSnapshots = (await runFleetReport({ dir, baseline: null })).report;
  t.same(fromSnapshots.nodes.map((v) => v.source), plan.map(() => 'snapshot'), 'without summaries: every node from its snapshot');
  t.same(judged(report), judged(fromSnapshots), 'the same verdicts, node for node');
});

t.test('every way a summary can be stale or broken: that node read from its snapshot, and the report says why', async (t) => {
  const dir = t.testdir();
  const plan = await generateRealFleet(dir, { n: 11, seed: 4, rates: CLEAN, summaries: true, spools: false });
  const sum = (n: number): string => path.join(dir, `gpu${String(n).padStart(4, '0')}.summary.json`);
  const edit = (n: number, f: (s: Record<string, unknown>) => void): void => {
    const s = JSON.parse(readFileSync(sum(n), 'utf8')) as Record<string, unknown>;
    f(s);
    writeFileSync(sum(n), JSON.stringify(s));
  };
  // 1: its snapshot taken again since (another error history): the digest no longer matches.
  writeFileSync(path.join(dir, 'gpu0001.tar.gz'), await realSnapshot(null, 'gpu0001', 99, 4));
  writeFileSync(sum(2), '{"format": ');
  edit(3, (s) => void (s.extra = 1));
  copyFileSync(sum(5), sum(4));
  rmSync(sum(5));
  symlinkSync(sum(6), sum(5));
  edit(6, (s) => void ((s.view as Record<string, unknown>).version = VIEW_VERSION + 1));
  writeFileSync(sum(7), readFileSync(sum(7), 'utf8') + ' '.repeat(1024 * 1024));
  rmSync(sum(8));
  // 9: a summary that says something its snapshot does not, under the snapshot's digest: read first, and trusted.
  edit(9, (s) => {
    const v = s.view as { nics: { name: string; fw: string }[] };
    v.nics[3]!.fw = '28.41.0001';
  });
  writeFileSync(path.join(dir, 'gpu0099.summary.json'), readFileSync(sum(10)));
  const { report } = await runFleetReport({ dir, baseline: null });
  const v = new Map(report.nodes.map((x) => [x.node, x]));
  const unused = (why: string): string => `summary not used: ${why}; judged from the snapshot`;
  const expect: [string, string | null, string | null][] = [
    ['gpu0001', 'snapshot', unused('its digest is not that of the snapshot beside it (the snapshot changed since)')],
    ['gpu0002', 'snapshot', unused('it is not JSON (Unexpected end of JSON input)')],
    ['gpu0003', 'snapshot', unused('it does not validate (/: must NOT have additional properties (extra))')],
    ['gpu0004', 'snapshot', unused(`it is "gpu0005"'s, not gpu0004's`)],
    ['gpu0005', 'snapshot', unused(`${sum(5)} is a symbolic link`)],
    ['gpu0006', 'snapshot', unused(`it does not validate (/view/version: must be equal to constant: ${VIEW_VERSION})`)],
    ['gpu0007', 'snapshot', unused(`${sum(7)} is ${statSync(sum(7)).size} bytes, more than 1048576`)],
    ['gpu0008', 'snapshot', null],
    ['gpu0009', 'summary', null],
    ['gpu0010', 'summary', null],
    ['gpu0011', 'summary', null],
  ];
  for (const [node, source, note] of expect) {
    t.equal(v.get(node)?.source, source, `${node}: judged from its ${source}`);
    t.equal(v.get(node)?.sourceNote, note, note === null ? `${node}: no note` : `${node}: why its summary was not used`);
  }
  for (const n of plan.filter((x) => !['gpu0009'].includes(x.name))) t.equal(v.get(n.name)?.status, 'ok', `${n.name}: judged, clean`);
  t.same(v.get('gpu0009')?.differences.map((d) => `${d.area} ${d.subject} ${d.a} ${d.b}`), ['firmware mlx5_3 28.41.0001 28.39.1002'], 'the summary was what the report read');
  t.equal(v.get('gpu0099')?.status, 'unreadable', 'a summary without a snapshot: its node is listed, not judged');
  t.same(v.get('gpu0099')?.notes, ['gpu0099.summary.json: not used: no snapshot of gpu0099 was read to check it against']);
  t.same([report.summary.fromSummary, report.summary.fromSnapshot], [3, 8]);
});
