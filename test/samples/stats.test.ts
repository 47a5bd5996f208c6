// Tests nearest-rank percentiles on known series, per-key grouping, unit mismatches, samples from the future and recent windows.
import t from 'tap';
import { createHash } from 'node:crypto';
import { canonicalJson, makeSample, recipeHash, type ProbeRecipe, type Sample } from '../../src/samples/sample.js';
import { middle, nearestRank, StatsAccumulator, summarize } from '../../src/samples/stats.js';

const recipe: ProbeRecipe = {
  tool: 'ib_write_bw', args: ['-d', 'mlx5_0', '-s', '65536', '--report_gbits', '--use_cuda=0'], msgSize: 65536,
  iterations: 5000, durationS: null, qps: 1, numaNode: 0, direction: 'gpu->nic',
};
const sample = (value: number, ts: number, over: Partial<Sample> = {}): Sample => ({
  ...makeSample({ ts, node: 'gpu001', job: '42', probe: 'gdr-write', recipe, gpu: '0000:1b:00.0', nic: 'mlx5_0', bytes: 65536, value, unit: 'Gb/s' }),
  ...over,
});
const f64 = (xs: number[]): Float64Array => Float64Array.from(xs);

t.test('nearest rank: rank ceil(p/100 * n), always a measured value', async (t) => {
  // The textbook series (Wikipedia, "Percentile", nearest-rank method): 15 20 35 40 50.
  const w = f64([15, 20, 35, 40, 50]);
  t.same([5, 30, 40, 50, 100].map((p) => nearestRank(w, p)), [15, 20, 20, 35, 50]);
  const hundred = f64(Array.from({ length: 100 }, (_, i) => i + 1));
  t.same([nearestRank(hundred, 50), nearestRank(hundred, 95), nearestRank(hundred, 99)], [50, 95, 99]);
  const ten = f64([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  t.same([nearestRank(ten, 50), nearestRank(ten, 95), nearestRank(ten, 99)], [5, 10, 10]);
  t.equal(nearestRank(f64([1, 2, 3, 4]), 50), 2, 'no interpolation');
  t.equal(nearestRank(f64([7]), 99), 7);
  t.equal(nearestRank(f64([]), 50), null);
  t.equal(nearestRank(ten, 0), null);
  t.equal(nearestRank(ten, 101), null);
  t.equal(summarize(f64([]), f64([])), null);
});

t.test('the middle value is below a bound exactly when more than half the values are (seeded windows of 1 to 12)', async (t) => {
  let seed = 7;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  let disagree = 0;
  for (let k = 0; k < 2000; k++) {
    const n = 1 + Math.floor(rnd() * 12);
    const v = f64(Array.from({ length: n }, () => Math.round(rnd() * 20))).sort();
    const bound = Math.round(rnd() * 20);
    const below = Array.from(v).filter((x) => x < bound).length;
    if ((middle(v)! < bound) !== below * 2 > n) disagree++;
  }
  t.equal(disagree, 0);
  t.same([middle(f64([1, 2, 3, 4])), middle(f64([1, 2, 3])), middle(f64([]))], [3, 2, null], 'an even count: the upper middle value');
});

t.test('summary of an unsorted series; last is the newest by ts', async (t) => {
  const s = summarize(f64([92, 10, 91, 93, 90]), f64([1, 5, 2, 3, 4]));
  t.same(s, { count: 5, min: 10, p50: 91, p95: 93, p99: 93, last: 10, lastTs: 5 });
});

t.test('keys: probe, gpu, nic, direction and recipe hash each split the series', async (t) => {
  const acc = new StatsAccumulator();
  const other = { ...recipe, msgSize: 1048576, args: ['-s', '1048576'] };
  for (let i = 1; i <= 10; i++) {
    acc.add(sample(90 + i, i));
    acc.add(sample(10 * i, i, { nic: 'mlx5_1' }));
    acc.add(sample(i, i, { recipe: other, recipeHash: recipeHash(other) }));
  }
  acc.add(sample(5, 11, { unit: 'MB/s' }));
  const r = acc.result();
  t.equal(r.length, 3);
  const main = r.find((k) => k.key.nic === 'mlx5_0' && k.key.recipeHash === recipeHash(recipe));
  t.same(main?.all, { count: 10, min: 91, p50: 96, p95: 100, p99: 100, last: 100, lastTs: 10 }, 'p50 of an even count: the upper middle value');
  t.equal(main?.unitMismatches, 1, 'MB/s sample left out of a Gb/s series, counted');
  t.equal(main?.recent, main?.all, 'no window: recent is all');
  t.equal(r.find((k) => k.key.nic === 'mlx5_1')?.all.p50, 60);
  t.equal(r.find((k) => k.key.recipeHash === recipeHash(other))?.all.min, 1);
  t.not(recipeHash(recipe), recipeHash(other));
  const keys = (xs: readonly { key: { gpu: string | null; nic: string | null; recipeHash: string } }[]) => xs.map((k) => [k.key.gpu, k.key.nic, k.key.recipeHash]);
  t.same(keys(r), [['0000:1b:00.0', 'mlx5_0', 'd727bc77a67c'], ['0000:1b:00.0', 'mlx5_0', 'f40849b23b9f'], ['0000:1b:00.0', 'mlx5_1', 'f40849b23b9f']], 'sorted by probe, gpu, nic, direction, recipe hash');
  // Two GPUs measured through one adapter with one recipe (the GPU chosen outside the arguments): two series.
  const gpus = new StatsAccumulator();
  for (let i = 1; i <= 3; i++) {
    gpus.add(sample(20 + i, i, { gpu: '0000:9a:00.0' }));
    gpus.add(sample(10 + i, i));
  }
  t.same(gpus.result().map((k) => [k.key.gpu, k.all.count, k.all.p50]), [['0000:1b:00.0', 3, 12], ['0000:9a:00.0', 3, 22]]);
});

t.test('recipe hash: 12 hex of sha256 over canonical JSON, key order does not matter, arg order does', async (t) => {
  const canonical = '{"args":["-d","mlx5_0","-s","65536","--report_gbits","--use_cuda=0"],"direction":"gpu->nic","durationS":null,"iterations":5000,"msgSize":65536,"numaNode":0,"qps":1,"tool":"ib_write_bw"}';
  t.equal(canonicalJson(recipe), canonical);
  t.equal(recipeHash(recipe), createHash('sha256').update(canonical).digest('hex').slice(0, 12));
  const reordered = Object.fromEntries(Object.entries(recipe).reverse()) as unknown as ProbeRecipe;
  t.equal(recipeHash(reordered), recipeHash(recipe));
  t.not(recipeHash({ ...recipe, args: [...recipe.args].reverse() }), recipeHash(recipe));
  t.equal(sample(1, 1).recipeHash, recipeHash(recipe));
  t.equal(sample(1, 1).direction, 'gpu->nic', 'direction copied from the recipe');
});

t.test('windows: last N by ts, since T, both, empty', async (t) => {
  const acc = new StatsAccumulator();
  // 100 healthy runs, then a weak rail: the last 5 are at half rate. Arrival order is shuffled a little.
  const values = Array.from({ length: 105 }, (_, i) => ({ ts: 1000 + i, v: i < 100 ? 190 + (i % 10) : 95 }));
  const shuffled = [...values.slice(0, 50), values[52], values[51], values[50], ...values.slice(53)];
  for (const x of shuffled) if (x !== undefined) acc.add(sample(x.v, x.ts));
  const all = acc.result()[0];
  t.equal(all?.all.count, 105);
  t.equal(all?.all.p50, 194, 'the mean-ish view hides the weak rail');
  const last5 = acc.result({ lastN: 5 })[0]?.recent;
  t.same(last5, { count: 5, min: 95, p50: 95, p95: 95, p99: 95, last: 95, lastTs: 1104 });
  const since = acc.result({ sinceTs: 1098 })[0]?.recent;
  t.same([since?.count, since?.min, since?.p50, since?.p99], [7, 95, 95, 199]);
  const both = acc.result({ sinceTs: 1098, lastN: 100 })[0]?.recent;
  t.equal(both?.count, 7, 'both bounds apply');
  t.equal(acc.result({ sinceTs: 5000 })[0]?.recent, null);
  t.equal(acc.result({ lastN: 0 })[0]?.recent, null);
  const mid = acc.result({ sinceTs: 1050, lastN: 3 })[0]?.recent;
  t.equal(mid?.lastTs, 1104);
  t.equal(mid?.count, 3);
});

t.test('out of order at the tail (a delayed writer): the last N and the newest are by ts, not by arrival', async (t) => {
  const acc = new StatsAccumulator();
  // ts 1..10 at value 10·ts; ts 10 arrives before 7, 8 and 9, so the last three arrivals are ts 7, 8, 9.
  for (const ts of [1, 2, 3, 4, 5, 6, 10, 7, 8, 9]) acc.add(sample(10 * ts, ts));
  t.same(acc.result({ lastN: 3 })[0]?.recent, { count: 3, min: 80, p50: 90, p95: 100, p99: 100, last: 100, lastTs: 10 });
  t.same(acc.result({ sinceTs: 9 })[0]?.recent, { count: 2, min: 90, p50: 100, p95: 100, p99: 100, last: 100, lastTs: 10 });
});

t.test('ties and a spool read newest first: the newest is by ts, the later one in the spool on a tie', async (t) => {
  t.same(summarize([50, 60, 70], [1, 2, 2]), { count: 3, min: 50, p50: 60, p95: 70, p99: 70, last: 70, lastTs: 2 }, 'two samples of one ms: the later one');
  const acc = new StatsAccumulator();
  // Arrival strictly newest first (ts 5 down to 1, value 10·ts): the last 2 by ts are ts 4 and 5.
  for (const ts of [5, 4, 3, 2, 1]) acc.add(sample(10 * ts, ts));
  t.same(acc.result({ lastN: 2 })[0]?.recent, { count: 2, min: 40, p50: 50, p95: 50, p99: 50, last: 50, lastTs: 5 });
  // Out of order with a tie at the tail: of the two at ts 9, the one written later is the newest.
  const tie = new StatsAccumulator();
  for (const [ts, v] of [[1, 10], [9, 91], [3, 30], [9, 92]] as const) tie.add(sample(v, ts));
  t.same(tie.result({ lastN: 1 })[0]?.recent, { count: 1, min: 92, p50: 92, p95: 92, p99: 92, last: 92, lastTs: 9 });
});

t.test('samples stamped after notAfter (from the future) are left out of all and recent, and counted', async (t) => {
  // Five slow runs while the clock was a year ahead, then twenty healthy hourly runs after it was set back.
  const now = 1_800_000_000_000;
  const acc = new StatsAccumulator({ notAfter: now });
  for (let i = 0; i < 5; i++) acc.add(sample(5, now + 365 * 86_400_000 + i));
  for (let i = 19; i >= 0; i--) acc.add(sample(25 + i, now - i * 3_600_000));
  acc.add(sample(7, now + 1, { nic: 'mlx5_1' }));
  const [main, other] = acc.result({ lastN: 5 });
  t.same(main?.recent, { count: 5, min: 25, p50: 27, p95: 29, p99: 29, last: 25, lastTs: now }, 'the newest is the sample at now, not the ones a year ahead');
  t.same([main?.all.count, main?.all.min, main?.all.lastTs], [20, 25, now]);
  t.equal(main?.future, 5);
  t.equal(other, undefined, 'a key with only future samples (1 ms past notAfter) has no statistics');
  t.equal(acc.future, 6, 'counted over all keys');
  const plain = new StatsAccumulator();
  plain.add(sample(5, now + 365 * 86_400_000));
  t.equal(plain.result()[0]?.future, 0, 'no notAfter: nothing is from the future');
});

t.test('a million samples stream through in typed columns', async (t) => {
  const acc = new StatsAccumulator();
  const base = sample(0, 0);
  for (let i = 0; i < 1_000_000; i++) acc.add({ ...base, ts: i, value: (i * 7919) % 1000 });
  const r = acc.result({ lastN: 1000 })[0];
  t.equal(r?.all.count, 1_000_000);
  t.same([r?.all.min, r?.all.p50, r?.all.p95, r?.all.p99], [0, 500, 949, 989]);
  t.equal(r?.recent?.count, 1000);
});
