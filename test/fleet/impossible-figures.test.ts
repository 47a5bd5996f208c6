// Bandwidth figures no link carries (1e308 and 1.7e308 bytes/s from an exporter, 1e300 Gb/s in a spool) are refused
// on input: the node is not judged on that path and says so, bands stay finite, the JSON validates its schema.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runFleetReport } from '../../src/fleet/report-command.js';
import { buildFleetReport } from '../../src/fleet/report.js';
import { median } from '../../src/fleet/robust.js';
import { statsFromSeries, type Series } from '../../src/fleet/series.js';
import { generateFleet } from '../gen/fleet.js';
import { validate } from '../helpers/schema.js';

const CLEAN = { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 };

/** The epilog's p50 and samples series of one path of `node`, as Prometheus returns them. */
function series(node: string, p50: number): Series[] {
  const labels = (extra: Record<string, string>): Map<string, string> =>
    new Map(Object.entries({ node, probe: 'ib-write-gpu', gpu: '0000:18:00.0', nic: 'mlx5_0', direction: 'gpu->nic', recipe: 'r1', window: 'all', instance: `${node}:9100`, ...extra }));
  return [
    { name: 'gdrgate_bandwidth_bytes_per_second', labels: labels({ stat: 'p50' }), value: p50, source: 'prometheus:http://p/' },
    { name: 'gdrgate_bandwidth_samples', labels: labels({}), value: 5, source: 'prometheus:http://p/' },
  ];
}

t.test('the median of two values near the largest double is finite', async (t) => {
  t.equal(median([1.7e308, 1.7e308]), 1.7e308);
  t.equal(median([1e308, 1.7e308]), 1.35e308);
});

t.test('p50 of 1.7e308 on 5 nodes, 1e308 on 3: every node refused with why, no band, no Infinity, schema-valid', async (t) => {
  const nodes = Array.from({ length: 8 }, (_, i) => `gpu000${i + 1}`);
  const f = statsFromSeries(nodes.flatMap((n, i) => series(n, i < 5 ? 1.7e308 : 1e308)));
  t.same(f.stats, []);
  t.same(f.missing[0], { node: 'gpu0001', why: 'ib-write-gpu 0000:18:00.0→mlx5_0 gpu->nic recipe r1: p50 of 1.7e+308 bytes/s, above any link (at most 10000000000000)' });
  t.equal(f.missing.length, 8);
  const r = buildFleetReport({ dir: 'x', nodes: [], classOf: () => 'fleet', stats: f.stats, missing: [], broken: f.missing, problems: [] });
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
  t.same(r.classes[0]!.paths, []);
  t.same([r.summary.unreadable, r.exitCode], [8, 1]);
  // 1e13 bytes/s is the bound itself: taken; a hair above it is not.
  t.equal(statsFromSeries(series('gpu0001', 1e13)).stats.length, 1);
  t.equal(statsFromSeries(series('gpu0001', 1.0000001e13)).missing.length, 1);
});

// The spool reader (src/samples/sample.ts) refuses such a line as no sample (corrupt); the fleet judges the node in part.
t.test('a spool path at 1e300 Gb/s: those lines refused, the node judged in part and says why, exit 1', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 4, seed: 7, rates: CLEAN });
  // Rail 0 of gpu0001 and gpu0002 from a broken parser: as doubles, 1e300 Gb/s is 1.25e308 bytes/s (two of them summed overflow).
  for (const node of ['gpu0001', 'gpu0002']) {
    const f = path.join(dir, `${node}.samples.jsonl`);
    const ls = readFileSync(f, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { nic: string; value: number });
    writeFileSync(f, ls.map((s) => JSON.stringify(s.nic === 'mlx5_0' ? { ...s, value: 1e300 } : s)).join('\n') + '\n');
  }
  const r = (await runFleetReport({ dir, baseline: null })).report;
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
  for (const node of ['gpu0001', 'gpu0002']) {
    const v = r.nodes.find((x) => x.node === node)!;
    t.equal(v.status, 'incomplete', node);
    t.equal(v.notes.length, 1);
    const lines = readFileSync(path.join(dir, `${node}.samples.jsonl`), 'utf8').split('\n').filter((l) => l.includes('"value":1e+300')).length;
    t.equal(lines, 5, `${node}: its rail 0's five samples`);
    t.equal(v.notes[0], `5 corrupt spool lines skipped (no sample: bad JSON, a field out of range or a figure no link carries), not judged`);
  }
  for (const p of r.classes[0]!.paths) t.ok(p.band === null || (Number.isFinite(p.band.median) && Number.isFinite(p.band.low) && p.band.median < 1e13), `${p.rail}: a finite band`);
  t.equal(r.exitCode, 1);
});
