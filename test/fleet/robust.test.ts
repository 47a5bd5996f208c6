// Median/MAD bands: a few broken nodes move neither, as they would move a mean and a standard deviation.
import t from 'tap';
import { band, mad, median, MIN_SPREAD, outlier, OUTLIER_Z } from '../../src/fleet/robust.js';
import { compressHostlist } from '../../src/fleet/hostlist.js';
import { buildFleetReport } from '../../src/fleet/report.js';
import { validate } from '../helpers/schema.js';

t.test('median and MAD of odd, even and empty inputs', async (t) => {
  t.equal(median([3, 1, 2]), 2);
  t.equal(median([4, 1, 3, 2]), 2.5);
  t.ok(Number.isNaN(median([])));
  t.equal(mad([1, 2, 3, 4, 100]), 1, 'the 100 does not move the MAD');
  t.equal(band([]), null);
});

t.test('three weak nodes among 20: all outside the median/MAD band, all inside mean ± 3 sd', async (t) => {
  const xs = [...Array.from({ length: 17 }, (_, i) => 390 + (i % 5)), 300, 300, 300];
  const b = band(xs)!;
  t.same(xs.filter((x) => outlier(b, x) !== null), [300, 300, 300], 'exactly the weak nodes');
  const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length);
  t.ok(300 > mean - 3 * sd, `mean ${mean.toFixed(1)} − 3 × sd ${sd.toFixed(1)} = ${(mean - 3 * sd).toFixed(1)}: the weak nodes widen the sd until they pass`);
  t.ok(b.low > 300 && b.low < 390, `band from ${b.low.toFixed(1)}`);
});

t.test('identical values: the spread floor keeps a 1 % dip inside the band, a 10 % dip outside', async (t) => {
  const b = band(Array.from({ length: 10 }, () => 400))!;
  t.equal(b.mad, 0);
  t.equal(b.sigma, MIN_SPREAD * 400);
  t.equal(outlier(b, 396), null);
  t.equal(outlier(b, 400 - OUTLIER_Z * MIN_SPREAD * 400 - 1), 'low');
  t.equal(outlier(b, 500), 'high');
});

t.test('host lists compress to Slurm ranges by prefix and width, joined by commas', async (t) => {
  t.same(compressHostlist(['gpu0003', 'gpu0001', 'gpu0002', 'gpu0007', 'login', 'gpu12']), ['gpu12,gpu[0001-0003,0007],login']);
  t.same(compressHostlist(['n1']), ['n1']);
});

t.test('half a class on a weak rail: no clear majority, no band to judge by; the nodes say so, exit 1', async (t) => {
  const gb = (x: number): number => (x * 1e9) / 8;
  // Six nodes, three of them with mlx5_3 at 70 %: the median falls between the groups and a band from it held both.
  const xs = [400, 399, 401, 280, 281, 279].map(gb);
  const b = band(xs)!;
  t.same([b.unclear, xs.map((x) => outlier(b, x))], [true, [null, null, null, null, null, null]]);
  t.equal(band([400, 399, 401, 400, 280, 281, 279].map(gb))!.unclear, undefined, 'four against three: the four are the class, the three flagged');
  t.same([400, 399, 401, 400, 280, 281, 279].map(gb).map((x) => outlier(band([400, 399, 401, 400, 280, 281, 279].map(gb))!, x)), [null, null, null, null, 'low', 'low', 'low']);
  t.equal(band([400, 392, 408, 396, 404].map(gb))!.unclear, undefined, 'a 2 % spread is noise');
  const stats = xs.map((p50, i) => ({ node: `gpu000${i + 1}`, probe: 'ib-write-gpu', recipeHash: 'r1', gpu: '0000:41:00.0', nic: 'mlx5_3', direction: 'gpu->nic', p50, min: null, count: 5, source: 'spool:x' }));
  const r = buildFleetReport({ dir: 'x', nodes: [], classOf: () => 'hgx', stats, missing: [], problems: [] });
  const note = 'no clear majority on ib-write-gpu 0000:41:00.0↔mlx5_3 gpu->nic: figures from 279.0 Gb/s to 401.0 Gb/s around a median of 340.0 Gb/s: not judged';
  t.same(r.nodes.map((v) => [v.node, v.status, v.notes]), stats.map((s) => [s.node, 'incomplete', [note]]));
  t.equal(r.exitCode, 1, 'before: "all 6 nodes judged, all agree" (exit 0)');
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
});
