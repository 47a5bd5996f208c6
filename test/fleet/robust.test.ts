// Median/MAD bands: a few broken nodes move neither, as they would move a mean and a standard deviation.
import t from 'tap';
import { band, mad, median, MIN_SPREAD, outlier, OUTLIER_Z } from '../../src/fleet/robust.js';
import { compressHostlist } from '../../src/fleet/hostlist.js';

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
