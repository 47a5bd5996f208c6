// A bandwidth sample's value must be one a path can carry: written and read back only when finite, above zero and
// at most 10 TB/s, so printed garbage or an old spool line holding it never enters a window.
import t from 'tap';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { bandwidthProblem, makeSample, parseSampleLine, sampleLine, toSample, type BandwidthUnit, type ProbeRecipe } from '../../src/samples/sample.js';
import { appendSamples, readSpool } from '../../src/samples/spool.js';
import { scratchDir } from '../helpers/scratch.js';

const recipe: ProbeRecipe = { tool: 'nvbandwidth', args: ['-t', 'host_to_device_memcpy_ce'], msgSize: null, iterations: null, durationS: null, qps: null, numaNode: null, direction: 'h2d' };
const mk = (value: number, unit: BandwidthUnit = 'GB/s') => makeSample({ ts: 1_800_000_000_000, node: 'gpu001', job: '7', probe: 'nvbw-h2d', recipe, gpu: '0000:41:00.0', nic: null, bytes: 0, value, unit });

t.test('bandwidthProblem: the bounds in each unit', async (t) => {
  t.equal(bandwidthProblem(25.17, 'GB/s'), null);
  t.equal(bandwidthProblem(10000, 'GB/s'), null, '10 TB/s itself');
  t.equal(bandwidthProblem(10000.01, 'GB/s'), '10000.01 GB/s is above 10 TB/s, more than a PCIe or NVLink path carries');
  t.equal(bandwidthProblem(80000, 'Gb/s'), null, '80,000 Gb/s = 10 TB/s');
  t.equal(bandwidthProblem(80001, 'Gb/s'), '80001 Gb/s is above 10 TB/s, more than a PCIe or NVLink path carries');
  // perftest's MB/sec is 2^20 bytes: 10 TB/s is 9,536,743.16 of them.
  t.equal(bandwidthProblem(9_536_743, 'MB/s'), null);
  t.equal(bandwidthProblem(9_536_744, 'MB/s'), '9536744 MB/s is above 10 TB/s, more than a PCIe or NVLink path carries');
  t.equal(bandwidthProblem(0, 'GB/s'), '0 GB/s is not above zero');
  t.equal(bandwidthProblem(-5, 'Gb/s'), '-5 Gb/s is not above zero');
  t.equal(bandwidthProblem(Number.NaN, 'GB/s'), 'NaN GB/s is not a number');
  t.equal(bandwidthProblem(Infinity, 'GB/s'), 'Infinity GB/s is not a number');
});

t.test('sampleLine and toSample refuse the value that is not a bandwidth', async (t) => {
  t.not(sampleLine(mk(25.17)), null);
  for (const v of [-5, 0, -0, 1e308, 20000, Infinity]) {
    t.equal(sampleLine(mk(v)), null, `${v} not written`);
    t.equal(toSample({ ...mk(25.17), value: v }), null, `${v} not read back`);
  }
  t.equal(parseSampleLine(sampleLine(mk(25.17))!.replace('25.17', '-5')), null, 'a spool line with -5');
});

t.test('the spool: an impossible sample is rejected on write, an old line holding one is skipped on read', async (t) => {
  const dir = scratchDir('gdrgate-sample-value-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const a = appendSamples({ dir }, [mk(25.17), mk(-5), mk(1e308)]);
  t.same({ ok: a.ok, written: a.ok ? a.written : null, rejected: a.ok ? a.rejected : null }, { ok: true, written: 1, rejected: 2 });
  const live = join(dir, 'samples.jsonl');
  appendFileSync(live, readFileSync(live, 'utf8').replace('25.17', '-5'));
  const seen: number[] = [];
  const r = readSpool(dir, (s) => seen.push(s.value));
  t.same(seen, [25.17]);
  t.equal(r.corrupt, 1, 'the -5 line counted as corrupt');
});

// toSample checks a spool line field by field (src/samples/sample.ts): the line the Epilog writes, each field in turn
// given a value of another type (a hand-edited or foreign spool), is no sample; the same line as written is one.
t.test('a spool line with any one field of the wrong type is not a sample', async (t) => {
  const line = JSON.parse(sampleLine({ ...mk(25.17), ncclTopo: true })!) as Record<string, unknown>;
  t.same(toSample(line), { ...mk(25.17), ncclTopo: true }, 'as written');
  const wrong: [string, unknown][] = [
    ['ts', '1800000000000'], ['node', null], ['job', 7], ['probe', null], ['recipeHash', 0], ['gpu', 41], ['nic', false], ['direction', null],
    ['bytes', '0'], ['value', '25.17'], ['unit', 'Gbit/s'], ['ncclTopo', 'yes'],
  ];
  const r = line['recipe'] as Record<string, unknown>;
  const recipeWrong: [string, unknown][] = [['tool', null], ['args', [1]], ['msgSize', '65536'], ['iterations', '5000'], ['durationS', '10'], ['qps', '1'], ['numaNode', '0'], ['direction', 1]];
  t.same(wrong.filter(([k, v]) => toSample({ ...line, [k]: v }) !== null).map(([k]) => k), [], 'fields accepted with a wrong type');
  t.same(recipeWrong.filter(([k, v]) => toSample({ ...line, recipe: { ...r, [k]: v } }) !== null).map(([k]) => `recipe.${k}`), [], 'recipe fields accepted with a wrong type');
});
