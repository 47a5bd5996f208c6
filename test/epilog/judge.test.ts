// The bandwidth judgement, table-driven: windows and bands, one outlier never fails, the GPU↔NIC diagnosis, and every
// bandwidth code made by a case and worded (the epilog's counterpart of test/checks/registry.test.ts).
import t from 'tap';
import { BANDWIDTH, type BwCode } from '../../src/epilog/bandwidth.js';
import { judge } from '../../src/epilog/judge.js';
import type { BaselineEnvelope } from '../../src/model/baseline.js';
import type { ProbeOutcome, ProbeSpec } from '../../src/probes/types.js';
import { DIRECTION } from '../../src/probes/types.js';
import { makeSample, type BandwidthUnit, type ProbeRecipe, type Sample } from '../../src/samples/sample.js';
import { StatsAccumulator } from '../../src/samples/stats.js';
import type { Status } from '../../src/model/finding.js';

type Probe = 'ib-write-host' | 'ib-write-gpu' | 'nvbw-h2d';
const GPU = '0000:41:00.0';
const recipe = (p: Probe): ProbeRecipe => ({
  tool: p === 'nvbw-h2d' ? 'nvbandwidth' : 'ib_write_bw',
  args: p === 'nvbw-h2d' ? ['-t', 'host_to_device_memcpy_ce'] : ['-d', 'mlx5_0', '-s', '65536', ...(p === 'ib-write-gpu' ? ['--use_cuda=0'] : []), '127.0.0.1'],
  msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: null, direction: DIRECTION[p],
});
const path = (p: Probe) => ({ probe: p, gpu: p === 'ib-write-host' ? null : GPU, nic: p === 'nvbw-h2d' ? null : 'mlx5_0' });
const env = (p: Probe, warnBelow: number, failBelow: number, unit: BandwidthUnit = p === 'nvbw-h2d' ? 'GB/s' : 'Gb/s'): BaselineEnvelope => ({
  ...path(p), direction: DIRECTION[p], recipe: recipe(p), unit, p50: warnBelow / 0.85, samples: 3, warnBelow, failBelow,
});
const series = (p: Probe, values: readonly number[], unit: BandwidthUnit = p === 'nvbw-h2d' ? 'GB/s' : 'Gb/s'): Sample[] =>
  values.map((value, i) => makeSample({ ts: 1_800_000_000_000 + i * 1000, node: 'gpu001', job: String(i), recipe: recipe(p), ...path(p), bytes: 65536, value, unit }));
const ok = (p: Probe, last: Sample): ProbeOutcome => ({ spec: { probe: p } as ProbeSpec, kind: 'ok', samples: [last], durationMs: 1, notes: [] });

interface Case {
  readonly name: string;
  readonly history: Partial<Record<Probe, readonly number[]>>;
  /** Probed in this run (its newest sample is the run's); default: every probe with a history. */
  readonly fresh?: readonly Probe[];
  readonly envelopes: readonly BaselineEnvelope[];
  readonly extra?: readonly ProbeOutcome[];
  readonly unit?: BandwidthUnit;
  readonly renamed?: ReadonlyMap<string, string>;
  readonly want: readonly (readonly [Status, BwCode, string?])[];
}

const HOST = env('ib-write-host', 78, 64);
const GPUB = env('ib-write-gpu', 19.5, 16);
const H = [92.5, 92.4, 92.6, 92.5, 92.5];
const spec = (probe: Probe, subject = 'mlx5_0'): ProbeSpec => ({ kind: 'ib_write_bw', probe, nic: subject, gpu: null } as unknown as ProbeSpec);

export const cases: readonly Case[] = [
  { name: 'healthy window: pass', history: { 'ib-write-host': H, 'ib-write-gpu': [23, 23.1, 22.9, 23, 23] }, envelopes: [HOST, GPUB], want: [['pass', 'bw-ok', 'mlx5_0'], ['pass', 'bw-ok', `mlx5_0/${GPU}`]] },
  { name: 'one outlier (newest at 10.5): p50 still healthy, no fail', history: { 'ib-write-host': H, 'ib-write-gpu': [23, 23.1, 22.9, 23, 10.5] }, envelopes: [HOST, GPUB], want: [['pass', 'bw-ok', 'mlx5_0'], ['pass', 'bw-ok', `mlx5_0/${GPU}`]] },
  { name: 'two of five low: p50 still healthy', history: { 'ib-write-host': H, 'ib-write-gpu': [23, 23.1, 22.9, 10.5, 10.5] }, envelopes: [HOST, GPUB], want: [['pass', 'bw-ok', 'mlx5_0'], ['pass', 'bw-ok', `mlx5_0/${GPU}`]] },
  { name: 'two of four low, the newest low: half a window is not sustained → pass', history: { 'ib-write-host': H, 'ib-write-gpu': [23, 10.5, 23.1, 10.5] }, envelopes: [HOST, GPUB], want: [['pass', 'bw-ok', 'mlx5_0'], ['pass', 'bw-ok', `mlx5_0/${GPU}`]] },
  { name: 'three of four low, the newest low → fail', history: { 'ib-write-host': H, 'ib-write-gpu': [23, 10.5, 10.6, 10.5] }, envelopes: [HOST, GPUB], want: [['fail', 'bw-gpu-path', `mlx5_0/${GPU}`], ['pass', 'bw-ok', 'mlx5_0']] },
  {
    name: 'the host run failed this time over a low window: the GPU side between its bands stays a warn (no bw-nic from a window that could not be measured now)',
    history: { 'ib-write-host': [40, 40, 40, 40, 40], 'ib-write-gpu': [18, 18, 18, 18, 18] },
    fresh: ['ib-write-gpu'],
    extra: [{ spec: spec('ib-write-host'), kind: 'failed', why: 'loopback server failed (exit 1): the client\'s result is not ours', lines: [], durationMs: 5 }],
    envelopes: [HOST, GPUB],
    want: [['error', 'bw-probe-failed', 'mlx5_0'], ['warn', 'bw-low', `mlx5_0/${GPU}`]],
  },
  { name: 'sustained: GPU memory low, host healthy → bw-gpu-path fail', history: { 'ib-write-host': H, 'ib-write-gpu': [23, 23, 10.5, 10.6, 10.5] }, envelopes: [HOST, GPUB], want: [['fail', 'bw-gpu-path', `mlx5_0/${GPU}`], ['pass', 'bw-ok', 'mlx5_0']] },
  { name: 'recovering: window p50 low but the newest sample healthy → warn, not fail', history: { 'ib-write-host': H, 'ib-write-gpu': [10.5, 10.5, 10.5, 10.5, 23] }, envelopes: [HOST, GPUB], want: [['warn', 'bw-gpu-path', `mlx5_0/${GPU}`], ['pass', 'bw-ok', 'mlx5_0']] },
  { name: 'between the bands → warn', history: { 'ib-write-host': H, 'ib-write-gpu': [18, 18, 18, 18, 18] }, envelopes: [HOST, GPUB], want: [['warn', 'bw-gpu-path', `mlx5_0/${GPU}`], ['pass', 'bw-ok', 'mlx5_0']] },
  // The band reads "fail < 16": a figure at the bound is not below it.
  { name: 'the window p50 exactly at the fail bound, the newest below it: warn, not fail', history: { 'ib-write-host': H, 'ib-write-gpu': [16, 16, 16, 10.5, 10.5] }, envelopes: [HOST, GPUB], want: [['warn', 'bw-gpu-path', `mlx5_0/${GPU}`], ['pass', 'bw-ok', 'mlx5_0']] },
  { name: 'the window p50 below the fail bound, the newest exactly at it: warn, not fail', history: { 'ib-write-host': H, 'ib-write-gpu': [10.5, 10.5, 10.5, 10.5, 16] }, envelopes: [HOST, GPUB], want: [['warn', 'bw-gpu-path', `mlx5_0/${GPU}`], ['pass', 'bw-ok', 'mlx5_0']] },
  { name: 'a p50 exactly at the warn bound is not below it: pass', history: { 'ib-write-host': H, 'ib-write-gpu': [19.5, 19.5, 19.5, 19.5, 19.5] }, envelopes: [HOST, GPUB], want: [['pass', 'bw-ok', 'mlx5_0'], ['pass', 'bw-ok', `mlx5_0/${GPU}`]] },
  // capture.failRatio equal to warnRatio (or above it: envelope.ts takes the smaller) gives failBelow === warnBelow, a
  // band without a warn zone: a usable band, judged, never bw-band-invalid.
  { name: 'fail bound equal to the warn bound (no warn zone): judged, low → fail', history: { 'ib-write-host': H, 'ib-write-gpu': [10.5, 10.5, 10.5, 10.5, 10.5] }, envelopes: [HOST, env('ib-write-gpu', 16, 16)], want: [['fail', 'bw-gpu-path', `mlx5_0/${GPU}`], ['pass', 'bw-ok', 'mlx5_0']] },
  { name: 'exactly minSamples (3) samples, low: judged', history: { 'ib-write-host': H, 'ib-write-gpu': [10.5, 10.5, 10.5] }, envelopes: [HOST, GPUB], want: [['fail', 'bw-gpu-path', `mlx5_0/${GPU}`], ['pass', 'bw-ok', 'mlx5_0']] },
  {
    name: 'host probed and low, GPU run failed over a low history: the host finding is kept (no fresh GPU side to make a bw-nic)',
    history: { 'ib-write-host': [40, 40, 40, 40, 40], 'ib-write-gpu': [10.5, 10.5, 10.5, 10.5, 10.5] },
    fresh: ['ib-write-host'],
    extra: [{ spec: spec('ib-write-gpu'), kind: 'failed', why: 'GPU buffer failed (exit 1)', lines: [], durationMs: 5 }],
    envelopes: [HOST, GPUB],
    want: [['fail', 'bw-low', 'mlx5_0'], ['error', 'bw-probe-failed', 'mlx5_0']],
  },
  {
    name: 'host probed and low, GPU not probed this run over a low window: the host finding is kept (the GPU side makes no bw-nic this run)',
    history: { 'ib-write-host': [40, 40, 40, 40, 40], 'ib-write-gpu': [10.5, 10.5, 10.5, 10.5, 10.5] },
    fresh: ['ib-write-host'],
    envelopes: [HOST, GPUB],
    want: [['fail', 'bw-low', 'mlx5_0']],
  },
  { name: 'too few samples: pending even when low (one outlier never drains)', history: { 'ib-write-host': [92.5], 'ib-write-gpu': [10.5, 10.5] }, envelopes: [HOST, GPUB], want: [['skip', 'bw-pending', 'mlx5_0'], ['skip', 'bw-pending', `mlx5_0/${GPU}`]] },
  { name: 'host and GPU memory both low → one bw-nic', history: { 'ib-write-host': [40, 41, 40, 40, 40], 'ib-write-gpu': [10.5, 10.5, 10.5, 10.5, 10.5] }, envelopes: [HOST, GPUB], want: [['fail', 'bw-nic', 'mlx5_0']] },
  { name: 'GPU memory between its bands, host memory below its fail band → one bw-nic, a fail (the worse side decides)', history: { 'ib-write-host': [40, 40, 40, 40, 40], 'ib-write-gpu': [18, 18, 18, 18, 18] }, envelopes: [HOST, GPUB], want: [['fail', 'bw-nic', 'mlx5_0']] },
  { name: 'GPU low, host not probed and no host band → bw-low', history: { 'ib-write-gpu': [10.5, 10.5, 10.5, 10.5, 10.5] }, envelopes: [GPUB], want: [['fail', 'bw-low', `mlx5_0/${GPU}`]] },
  { name: 'GPU low, host band but no host samples yet → bw-low', history: { 'ib-write-gpu': [10.5, 10.5, 10.5, 10.5, 10.5] }, envelopes: [HOST, GPUB], want: [['fail', 'bw-low', `mlx5_0/${GPU}`]] },
  { name: 'host low, GPU healthy → bw-low on the host path', history: { 'ib-write-host': [40, 40, 40, 40, 40], 'ib-write-gpu': [23, 23, 23, 23, 23] }, envelopes: [HOST, GPUB], want: [['fail', 'bw-low', 'mlx5_0'], ['pass', 'bw-ok', `mlx5_0/${GPU}`]] },
  { name: 'GPU↔NIC diagnosis uses the host window even when the host was not probed this run', history: { 'ib-write-host': H, 'ib-write-gpu': [10.5, 10.5, 10.5, 10.5, 10.5] }, fresh: ['ib-write-gpu'], envelopes: [HOST, GPUB], want: [['fail', 'bw-gpu-path', `mlx5_0/${GPU}`]] },
  { name: 'nvbandwidth h2d low → bw-gpu-host', history: { 'nvbw-h2d': [12, 12, 12, 12, 12] }, envelopes: [env('nvbw-h2d', 21, 17)], want: [['fail', 'bw-gpu-host', GPU]] },
  {
    name: 'mlx5_0 is another adapter here (names swapped): its low samples are not held to its band, nor its GPU path',
    history: { 'ib-write-host': [40, 40, 40, 40, 40], 'ib-write-gpu': [10.5, 10.5, 10.5, 10.5, 10.5] },
    envelopes: [HOST, GPUB],
    renamed: new Map([['mlx5_0', 'the adapter at 0000:9a:00.0 is mlx5_0 here, mlx5_1 in the baseline']]),
    want: [['skip', 'bw-renamed', 'mlx5_0'], ['skip', 'bw-renamed', `mlx5_0/${GPU}`]],
  },
  { name: 'no band for the recipe: recorded, not judged', history: { 'ib-write-host': H }, envelopes: [], want: [['skip', 'bw-no-envelope', 'mlx5_0']] },
  { name: 'samples in MB/s, band in Gb/s: never converted', history: { 'ib-write-host': [110, 110, 110, 110, 110] }, unit: 'MB/s', envelopes: [HOST], want: [['error', 'bw-unit-mismatch', 'mlx5_0']] },
  { name: 'fail band above the warn band: unusable band', history: { 'ib-write-host': H }, envelopes: [env('ib-write-host', 60, 80)], want: [['error', 'bw-band-invalid', 'mlx5_0']] },
  {
    name: 'runs without a measurement: failed is an error, missing tool and budget are skips',
    history: {},
    envelopes: [HOST],
    extra: [
      { spec: spec('ib-write-gpu'), kind: 'failed', why: 'GPU buffer failed (exit 1)', lines: ["Couldn't allocate MR"], durationMs: 5 },
      { spec: spec('ib-write-host', 'mlx5_1'), kind: 'unusable', why: '/opt/ib_write_bw: ENOENT' },
      { spec: spec('ib-write-host', 'mlx5_2'), kind: 'budget', why: '120 ms of the 20000 ms budget left' },
    ],
    want: [['error', 'bw-probe-failed', 'mlx5_0'], ['skip', 'bw-tool-unusable', 'mlx5_1'], ['skip', 'bw-budget', 'mlx5_2']],
  },
];

function run(c: Case) {
  const acc = new StatsAccumulator();
  const outcomes: ProbeOutcome[] = [...(c.extra ?? [])];
  for (const [p, values] of Object.entries(c.history) as [Probe, number[]][]) {
    const s = series(p, values, c.unit);
    s.forEach((x) => acc.add(x));
    if ((c.fresh ?? Object.keys(c.history)).includes(p)) outcomes.push(ok(p, s[s.length - 1]!));
  }
  return judge({ outcomes, stats: acc.result({ lastN: 5 }), envelopes: c.envelopes, minSamples: 3, ...(c.renamed ? { renamed: c.renamed } : {}) });
}

for (const c of cases)
  t.test(c.name, async (t) => {
    const got = run(c);
    t.strictSame(got.map((f) => [f.status, f.code, f.subject]), c.want.map(([s, code, subj]) => [s, code, subj]), got.map((f) => f.message).join('\n'));
  });

t.test('an older host recipe kept beside the current one: the GPU side is set against the one measured last', async (t) => {
  const old: ProbeRecipe = { ...recipe('ib-write-host'), args: ['-d', 'mlx5_0', '-s', '65536', '-q', '2', '127.0.0.1'], qps: 2 };
  const oldEnv: BaselineEnvelope = { ...HOST, recipe: old };
  const acc = new StatsAccumulator();
  // The old recipe's slow samples first (before the recapture), then the current recipe's healthy ones, then the GPU's.
  const slowOld = [10.5, 10.5, 10.5].map((value, i) => makeSample({ ts: 1_700_000_000_000 + i, node: 'gpu001', job: String(i), recipe: old, ...path('ib-write-host'), bytes: 65536, value, unit: 'Gb/s' }));
  const host = series('ib-write-host', H);
  const gpu = series('ib-write-gpu', [18, 18, 18, 18, 18]);
  for (const x of [...slowOld, ...host, ...gpu]) acc.add(x);
  const f = judge({ outcomes: [ok('ib-write-gpu', gpu[4]!)], stats: acc.result({ lastN: 5 }), envelopes: [oldEnv, HOST, GPUB], minSamples: 3 });
  t.strictSame(f.map((x) => [x.status, x.code, x.message]), [['warn', 'bw-gpu-path', `GPU memory p50 18 Gb/s over 5 (band: warn < 19.5, fail < 16 Gb/s) while host memory on mlx5_0 is healthy (p50 92.5 Gb/s)`]]);
});

t.test("the GPU side is set against host memory on its own adapter, never another adapter's", async (t) => {
  // mlx5_1's host memory is low and measured last; mlx5_0's, the adapter of the GPU run, is healthy.
  const other = (r: ProbeRecipe): ProbeRecipe => ({ ...r, args: r.args.map((a) => (a === 'mlx5_0' ? 'mlx5_1' : a)) });
  const host1: BaselineEnvelope = { ...HOST, nic: 'mlx5_1', recipe: other(HOST.recipe) };
  const acc = new StatsAccumulator();
  const gpu = series('ib-write-gpu', [10.5, 10.5, 10.5, 10.5, 10.5]);
  const low1 = [40, 40, 40, 40, 40].map((value, i) => makeSample({ ts: 1_900_000_000_000 + i, node: 'gpu001', job: String(i), recipe: host1.recipe, probe: 'ib-write-host', gpu: null, nic: 'mlx5_1', bytes: 65536, value, unit: 'Gb/s' }));
  for (const x of [...series('ib-write-host', H), ...gpu, ...low1]) acc.add(x);
  const f = judge({ outcomes: [ok('ib-write-gpu', gpu[4]!)], stats: acc.result({ lastN: 5 }), envelopes: [HOST, host1, GPUB], minSamples: 3 });
  t.strictSame(f.map((x) => [x.status, x.code, x.subject]), [['fail', 'bw-gpu-path', `mlx5_0/${GPU}`]]);
});

t.test('a bw-gpu-path finding says what it saw and what it wanted', async (t) => {
  const [f] = run(cases.find((c) => c.name.startsWith('sustained: GPU memory low'))!);
  t.same(f, { check: 'bandwidth', code: 'bw-gpu-path', status: 'fail', subject: 'mlx5_0/0000:41:00.0', message: 'GPU memory p50 10.6 Gb/s over 5 (band: warn < 19.5, fail < 16 Gb/s) while host memory on mlx5_0 is healthy (p50 92.5 Gb/s)', probe: 'ib-write-gpu', recipeHash: '9948f7323a3e', actual: 'p50 10.6 Gb/s over 5', expected: '>= 16 Gb/s' });
  t.equal(f!.message, 'GPU memory p50 10.6 Gb/s over 5 (band: warn < 19.5, fail < 16 Gb/s) while host memory on mlx5_0 is healthy (p50 92.5 Gb/s)');
});

t.test("a bw-nic finding: both sides' figures, to two decimals, and the host side's fail bound wanted", async (t) => {
  const acc = new StatsAccumulator();
  const gpu = series('ib-write-gpu', [10.55, 10.55, 10.55, 10.55, 10.55]);
  for (const x of [...series('ib-write-host', [40.25, 40.25, 40.25, 40.25, 40.25]), ...gpu]) acc.add(x);
  const f = judge({ outcomes: [ok('ib-write-gpu', gpu[4]!)], stats: acc.result({ lastN: 5 }), envelopes: [HOST, GPUB], minSamples: 3 });
  t.same(f, [{ check: 'bandwidth', code: 'bw-nic', status: 'fail', subject: 'mlx5_0', message: 'GPU memory p50 10.55 Gb/s over 5 and host memory p50 40.25 Gb/s over 5, both below their bands', probe: 'ib-write-gpu', recipeHash: '9948f7323a3e', actual: 'host p50 40.25 GPU p50 10.55 Gb/s', expected: 'host >= 64 Gb/s' }]);
});

t.test('samples from the future are left out: the fresh run is judged on its true predecessors, pending says why', async (t) => {
  const now = 1_800_000_000_000 + 4000;
  const acc = new StatsAccumulator({ notAfter: now });
  const ahead = series('ib-write-gpu', [10.5, 10.5, 10.5, 10.5]).map((s) => ({ ...s, ts: s.ts + 365 * 86_400_000 }));
  const fresh = series('ib-write-gpu', [23, 23, 23, 23, 23]);
  for (const s of [...ahead, ...fresh.slice(3)]) acc.add(s);
  const f = judge({ outcomes: [ok('ib-write-gpu', fresh[4]!)], stats: acc.result({ lastN: 5 }), envelopes: [GPUB], minSamples: 3 });
  t.strictSame(f.map((x) => [x.status, x.code, x.message]), [['skip', 'bw-pending', 'p50 23 Gb/s over 2 (4 stamped in the future left out); judged from 3 samples on']]);
});

t.test('every bandwidth code is made by a case above and worded', async (t) => {
  const made = new Set(cases.flatMap((c) => run(c).map((f) => f.code)));
  t.strictSame(Object.keys(BANDWIDTH.codes).filter((k) => !made.has(k as BwCode)), [], 'codes no case makes');
  for (const [k, e] of Object.entries(BANDWIDTH.codes)) t.ok(e.tells.length > 20 && e.do.length > 3, `${k} worded`);
});
