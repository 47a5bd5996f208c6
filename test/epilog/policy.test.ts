// Sampling policy (every Nth job, at least T since the last probing run), the stamp, the one-prober lock, and the
// bandwidth drain reason.
import t from 'tap';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';
import { PROBE_LOCK, readStamp, STAMP, takeProbeLock, writeStamp } from '../../src/epilog/files.js';
import { bw } from '../../src/epilog/finding.js';
import { parseStamp, samplingDecision, type Stamp } from '../../src/epilog/policy.js';
import type { SamplingPolicy } from '../../src/probes/config.js';
import { bandwidthReason, MAX_REASON_BYTES } from '../../src/slurm/reason.js';
import { scratchDir } from '../helpers/scratch.js';

const NOW = 1_800_000_000_000;
const pol = (p: Partial<SamplingPolicy>): SamplingPolicy => ({ everyNthJob: null, minIntervalS: null, combine: 'any', ...p });
const at = (agoS: number): Stamp => ({ ts: NOW - agoS * 1000, job: '1', cursor: 0 });

const cases: readonly (readonly [string, SamplingPolicy, string | null, Stamp | null, boolean])[] = [
  ['no rule: every epilog', pol({}), '7', null, true],
  ['every 10th: job 120', pol({ everyNthJob: 10 }), '120', null, true],
  ['every 10th: job 121', pol({ everyNthJob: 10 }), '121', null, false],
  ['every 10th: no job id (manual run)', pol({ everyNthJob: 10 }), null, null, false],
  ['hourly: never probed', pol({ minIntervalS: 3600 }), '5', null, true],
  ['hourly: 59 min ago', pol({ minIntervalS: 3600 }), '5', at(3540), false],
  ['hourly: exactly 60 min ago (at least T: probes)', pol({ minIntervalS: 3600 }), '5', at(3600), true],
  ['hourly: 61 min ago', pol({ minIntervalS: 3600 }), '5', at(3660), true],
  ['any: job 121 but 2 h ago', pol({ everyNthJob: 10, minIntervalS: 3600 }), '121', at(7200), true],
  ['any: job 120 though 1 min ago', pol({ everyNthJob: 10, minIntervalS: 3600 }), '120', at(60), true],
  ['all: job 120 but 1 min ago', pol({ everyNthJob: 10, minIntervalS: 3600, combine: 'all' }), '120', at(60), false],
  ['all: job 120 and 2 h ago', pol({ everyNthJob: 10, minIntervalS: 3600, combine: 'all' }), '120', at(7200), true],
  ['all: job 121', pol({ everyNthJob: 10, minIntervalS: 3600, combine: 'all' }), '121', at(7200), false],
];

t.test('samplingDecision', async (t) => {
  for (const [name, p, job, stamp, want] of cases) {
    const d = samplingDecision(p, job, () => stamp, NOW);
    t.equal(d.probe, want, `${name}: ${d.why}`);
  }
});

t.test('bounds: half a second short of T is not T; a job id that is not digits is no job id', async (t) => {
  const hourly = pol({ minIntervalS: 3600 });
  t.strictSame(samplingDecision(hourly, '5', () => at(3599.5), NOW), { probe: false, why: 'last probing run 3599 s ago (every 3600 s at most)' }, 'whole seconds since, rounded down');
  t.strictSame(samplingDecision(hourly, '5', () => at(3600), NOW), { probe: true, why: 'last probing run 3600 s ago (every 3600 s at most)' });
  const tenth = pol({ everyNthJob: 10 });
  // Number('') and Number(' 120') are 0 and 120: read as numbers they would pick this epilog to probe.
  for (const job of ['', ' 120', '120 ', '1.2e2', '0x78']) t.strictSame(samplingDecision(tenth, job, () => null, NOW), { probe: false, why: 'no job id for everyNthJob' }, JSON.stringify(job));
  t.strictSame(samplingDecision(tenth, '120', () => null, NOW), { probe: true, why: 'job 120 % 10 = 0' });
});

t.test('a probe stamp from the future is stale: the epilog probes and says why (a clock that ran ahead)', async (t) => {
  const hourly = pol({ minIntervalS: 3600 });
  const year = 365 * 86400;
  t.strictSame(samplingDecision(hourly, '5', () => at(-year), NOW), { probe: true, why: `last probing run stamped ${year} s in the future (clock moved back?): taken as stale` });
  t.strictSame(samplingDecision(hourly, '5', () => at(-61), NOW), { probe: true, why: 'last probing run stamped 61 s in the future (clock moved back?): taken as stale' }, 'just past the 60 s tolerance');
  t.strictSame(samplingDecision(hourly, '5', () => at(-60), NOW), { probe: false, why: 'last probing run 0 s ago (every 3600 s at most)' }, 'within the tolerance: probed just now (never "-60 s ago")');
  t.strictSame(samplingDecision(hourly, '5', () => ({ ts: NOW + 400, job: '4', cursor: 0 }), NOW), { probe: false, why: 'last probing run 0 s ago (every 3600 s at most)' }, 'a concurrent epilog stamped 0.4 s after this one read the clock (was "-1 s ago")');
  t.strictSame(samplingDecision(hourly, '5', () => parseStamp('{"ts":1e300,"cursor":0}'), NOW), { probe: true, why: 'last probing run stamped 1e+297 s in the future (clock moved back?): taken as stale' });
  const all = pol({ everyNthJob: 10, minIntervalS: 3600, combine: 'all' });
  t.equal(samplingDecision(all, '70', () => at(-year), NOW).probe, true, 'combine all: the Nth job still probes');
});

t.test('every-Nth-job alone never reads the stamp (no I/O outside the policy)', async (t) => {
  let reads = 0;
  samplingDecision(pol({ everyNthJob: 10 }), '121', () => (reads++, null), NOW);
  samplingDecision(pol({ everyNthJob: 10, minIntervalS: 60, combine: 'all' }), '121', () => (reads++, null), NOW);
  t.equal(reads, 0);
});

t.test('stamp: round trip, malformed is a fresh start', async (t) => {
  const dir = scratchDir('gdrgate-stamp-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.equal(readStamp(dir), null, 'none yet');
  writeStamp(dir, { ts: NOW, job: '9', cursor: 2 });
  t.strictSame(readStamp(dir), { ts: NOW, job: '9', cursor: 2 });
  for (const bad of ['', '{', '[]', '{"ts":"x","cursor":0}', '{"ts":1,"cursor":-1}', '{"ts":1e999,"cursor":0}', '{"ts":-1e999,"cursor":0}']) t.equal(parseStamp(bad), null, JSON.stringify(bad));
});

// The cursor indexes the plan's units (probes/run.ts: start = cursor % units): 1.5 would name no unit (units[1.5] is
// undefined) and every later epilog would stop on it. A cursor that is no whole number of units is no stamp: this
// epilog probes from the first unit and writes a good one.
t.test('stamp: a cursor that is not a whole non-negative number is no stamp; 0 is one', async (t) => {
  const dir = scratchDir('gdrgate-stamp-cursor-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const hourly = pol({ minIntervalS: 3600 });
  for (const cursor of ['1.5', '"2"', '-1', '1e309', '9007199254740992', 'null', 'true']) {
    writeFileSync(join(dir, STAMP), `{"ts":${NOW - 60_000},"job":"9","cursor":${cursor}}\n`);
    t.equal(readStamp(dir), null, `cursor ${cursor}`);
    t.strictSame(samplingDecision(hourly, '10', () => readStamp(dir), NOW), { probe: true, why: 'no probing run recorded yet' }, `cursor ${cursor}: probes`);
  }
  for (const cursor of [0, 9007199254740991]) {
    writeFileSync(join(dir, STAMP), `{"ts":${NOW - 60_000},"job":"9","cursor":${cursor}}\n`);
    t.strictSame(readStamp(dir), { ts: NOW - 60_000, job: '9', cursor }, `cursor ${cursor}`);
    t.strictSame(samplingDecision(hourly, '10', () => readStamp(dir), NOW), { probe: false, why: 'last probing run 60 s ago (every 3600 s at most)' });
  }
});

t.test('probe lock: one prober; a dead owner or a stale lock is broken', async (t) => {
  const dir = scratchDir('gdrgate-lock-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const a = takeProbeLock(dir, 60_000);
  t.ok('release' in a, 'first taker gets it');
  const b = takeProbeLock(dir, 60_000);
  t.same(b, { held: `another epilog (pid ${process.pid}) is probing` }, 'second is told');
  if ('release' in a) a.release();
  writeFileSync(join(dir, PROBE_LOCK), '999999999\n'); // no such pid
  const c = takeProbeLock(dir, 60_000);
  t.ok('release' in c, 'lock of a dead pid broken');
  t.match(readFileSync(join(dir, PROBE_LOCK), 'utf8'), new RegExp(`^${process.pid} \\d+ \\w+ start=\\d+\n$`), 'ours now: pid, time, token, its start');
  if ('release' in c) c.release();
});

t.test('bandwidth reason: labelled by its code, the first 20 characters say bw-…', async (t) => {
  const f = bw('bw-gpu-path', 'fail', 'mlx5_0/0000:41:00.0', 'GPU memory low', { actual: 'p50 10.5 Gb/s over 5', expected: '>= 16.12 Gb/s' });
  const r = bandwidthReason([f], '4242');
  t.equal(r, 'gdrgate: bw-gpu-path mlx5_0/0000:41:00.0 p50 10.5 Gb/s over 5 (want >= 16.12 Gb/s) job=4242');
  t.equal(r.slice(0, 20), 'gdrgate: bw-gpu-path');
  t.equal(bandwidthReason([bw('bw-nic', 'fail', 'mlx5_3', 'x', { actual: 'y' }), f], '1'), 'gdrgate: bw-nic mlx5_3 y; +1 more job=1');
  const long = bandwidthReason([bw('bw-low', 'fail', 'm'.repeat(300), 'x')], '123456');
  t.ok(Buffer.byteLength(long) <= MAX_REASON_BYTES && long.endsWith(' job=123456'), 'at most 255 bytes, job kept');
});
