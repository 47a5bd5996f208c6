// The fleet's bandwidth loaders: the epilog's real textfile (src/epilog/prom.ts) read back through the text parser
// and through a Prometheus-shaped query answer, bad answers refused with a clear error (table and seeded
// mutations), and the HTTP client against hostile servers (silent, endless, redirecting, not JSON).
import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { serve } from '../helpers/http-serve.js';
import { parsePromText, PromTextError } from '../../src/fleet/prom-text.js';
import { parseQueryAnswer, PromAnswerError } from '../../src/fleet/prom-answer.js';
import { SeriesError, statsFromSeries, type Series } from '../../src/fleet/series.js';
import { loadPrometheus, PrometheusError } from '../../src/fleet/prometheus.js';
import { loadStatsFromTextfiles, TextfileError } from '../../src/fleet/textfiles.js';
import { BYTES_PER_SECOND } from '../../src/epilog/prom.js';
import { nodeTextfile, RAILS, SLOW_GBPS, GPU_GBPS } from './_prom-fleet.js';
import { seeded } from '../helpers/seeded.js';
import { scratchDir } from '../helpers/scratch.js';

const GB = BYTES_PER_SECOND['Gb/s'];
const FLEET = [nodeTextfile('gpu001', false, 11), nodeTextfile('gpu002', true, 12), nodeTextfile('gpu003', false, 13)];

/** What Prometheus answers for an instant query of these series after a scrape (its JSON envelope, as documented). */
function answerOf(series: readonly Series[], extra: Record<string, string> = { instance: '127.0.0.1:9100', job: 'node' }): string {
  return JSON.stringify({
    status: 'success',
    data: { resultType: 'vector', result: series.map((s) => ({ metric: { __name__: s.name, ...Object.fromEntries(s.labels), ...extra }, value: [1_800_000_600.123, String(s.value)] })) },
  });
}
const allSeries = (): Series[] => FLEET.flatMap((f) => parsePromText(f.text, `textfile:${f.node}.prom`));

t.test("the renderer's textfile read back: every node's paths, p50 and min in bytes/s, the slow rail lower", async (t) => {
  const { stats, missing } = statsFromSeries(allSeries());
  t.same(missing, []);
  t.equal(stats.length, FLEET.length * RAILS.length, 'one figure per node and rail');
  for (const f of FLEET)
    for (const k of f.stats) {
      const s = stats.find((x) => x.node === f.node && x.probe === k.key.probe && x.gpu === k.key.gpu && x.nic === k.key.nic);
      t.ok(s, `${f.node} ${k.key.probe} ${k.key.gpu}`);
      t.equal(s?.p50, k.all.p50 * GB, `${f.node} ${k.key.gpu ?? 'host'}: p50 ${k.all.p50} Gb/s`);
      t.equal(s?.min, k.all.min * GB);
      t.equal(s?.count, k.all.count);
      t.equal(s?.recipeHash, k.key.recipeHash);
    }
  const rail = (n: string) => stats.find((s) => s.node === n && s.gpu === RAILS[2].gpu)!.p50;
  t.ok(rail('gpu002') < rail('gpu001') && rail('gpu002') < rail('gpu003'), 'the slow node is lower on its slow rail');
  t.ok(Math.abs(rail('gpu002') / GB - SLOW_GBPS) < SLOW_GBPS * 0.011 && Math.abs(rail('gpu001') / GB - GPU_GBPS) < GPU_GBPS * 0.011);
  const recent = statsFromSeries(allSeries(), 'recent').stats;
  t.ok(recent.every((s) => s.count === 5), 'window "recent": the last 5 samples');
});

t.test('the same figures through a Prometheus query answer, exported_node preferred over a target label node', async (t) => {
  const viaText = statsFromSeries(allSeries()).stats.map(({ source: _s, ...rest }) => rest);
  const viaApi = statsFromSeries(parseQueryAnswer(answerOf(allSeries()), 'prometheus:x')).stats.map(({ source: _s, ...rest }) => rest);
  t.same(viaApi, viaText);
  const relabelled = JSON.parse(answerOf(allSeries())) as { data: { result: { metric: Record<string, string> }[] } };
  for (const r of relabelled.data.result) [r.metric.exported_node, r.metric.node] = [r.metric.node!, 'rack-label'];
  t.same(statsFromSeries(parseQueryAnswer(JSON.stringify(relabelled), 'p')).stats.map((s) => s.node).filter((v, i, a) => a.indexOf(v) === i), ['gpu001', 'gpu002', 'gpu003']);
});

t.test('a node with an impossible or ambiguous figure is listed missing, its other figures unused', async (t) => {
  const base = allSeries();
  const edit = (pick: (s: Series) => boolean, value: number): Series[] => base.map((s) => (pick(s) ? { ...s, value } : s));
  const p50Of2 = (s: Series): boolean => s.labels.get('node') === 'gpu002' && s.labels.get('stat') === 'p50' && s.labels.get('window') === 'all' && s.labels.get('nic') === 'mlx5_1';
  const [rail1, rail0] = ['ib-write-gpu 0000:82:00.0→mlx5_1 gpu->nic->gpu recipe 6fe4d9ab4fa3: ', 'ib-write-gpu 0000:41:00.0→mlx5_0 gpu->nic->gpu recipe 18a4ed472419: '];
  const cases: [string, Series[], string][] = [
    ['NaN p50', edit(p50Of2, NaN), `${rail1}p50 of NaN bytes/s`],
    ['+Inf p50', edit(p50Of2, Infinity), `${rail1}p50 of Infinity bytes/s`],
    ['negative p50', edit(p50Of2, -1), `${rail1}p50 of -1 bytes/s`],
    ['fractional count', edit((s) => s.name === 'gdrgate_bandwidth_samples' && s.labels.get('node') === 'gpu002', 2.5), `${rail0}2.5 samples; +2 more`],
    ['min above p50', edit((s) => s.labels.get('node') === 'gpu002' && s.labels.get('stat') === 'min', 1e12), `${rail0}min of 1000000000000 bytes/s with p50 2880000000; +2 more`],
    ['no count', base.filter((s) => !(s.name === 'gdrgate_bandwidth_samples' && s.labels.get('node') === 'gpu002' && s.labels.get('nic') === 'mlx5_1')), `${rail1}no gdrgate_bandwidth_samples series in window "all"`],
    ['no p50', base.filter((s) => !p50Of2(s)), `${rail1}no stat="p50" series in window "all"`],
    ['two exporters disagree', [...base, ...base.filter(p50Of2).map((s) => ({ ...s, value: s.value * 2 }))], `${rail1}2 series disagree on p50 (1311250000, 2622500000)`],
  ];
  for (const [name, series, why] of cases) {
    const r = statsFromSeries(series);
    t.same(r.missing.map((m) => m.node), ['gpu002'], `${name}: gpu002 missing`);
    t.equal(r.missing[0]?.why, why, name);
    t.notOk(r.stats.some((s) => s.node === 'gpu002'), `${name}: none of gpu002's figures`);
    t.equal(r.stats.length, 2 * RAILS.length, `${name}: the other nodes whole`);
  }
  t.same(statsFromSeries([...base, ...base]).missing, [], 'the same series twice (two scrape jobs) agree: kept once');
  t.equal(statsFromSeries([...base, ...base]).stats.length, FLEET.length * RAILS.length);
});

t.test('series that cannot be attributed refuse the answer', async (t) => {
  const one = allSeries().find((s) => s.labels.get('stat') === 'p50' && s.labels.get('window') === 'all')!;
  const without = (l: string): Series => ({ ...one, labels: new Map([...one.labels].filter(([k]) => k !== l)) });
  t.throws(() => statsFromSeries([without('node')]), SeriesError);
  t.throws(() => statsFromSeries([without('node')]), /has no node label/);
  t.throws(() => statsFromSeries([without('probe')]), /gpu001 .* has no probe label/);
  t.throws(() => statsFromSeries([{ ...one, labels: new Map([...one.labels, ['node', 'a,b[1-2]']]) }]), /characters other than/);
  t.same(statsFromSeries([without('stat')].map((s) => ({ ...s, name: 'gdrgate_other' }))), { stats: [], missing: [] }, 'other metrics ignored');
});

t.test('malformed query answers: a clear error each', async (t) => {
  const ok = { metric: { __name__: 'gdrgate_bandwidth_samples', node: 'n' }, value: [1, '3'] };
  const env = (result: unknown, more: Record<string, unknown> = {}) => JSON.stringify({ status: 'success', data: { resultType: 'vector', result }, ...more });
  const cases: [string, string, RegExp][] = [
    ['not JSON', '<html>502 Bad Gateway</html>', /not JSON/],
    ['truncated', env([ok]).slice(0, 40), /not JSON/],
    ['array', '[]', /not a JSON object/],
    ['error status', JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error at char 3' }), /Prometheus answered an error \("bad_data"\): "parse error at char 3"/],
    ['no status', JSON.stringify({ data: {} }), /status is "undefined"/],
    ['matrix', JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] } }), /resultType is "matrix"/],
    ['result object', JSON.stringify({ status: 'success', data: { resultType: 'vector', result: {} } }), /not an array/],
    ['null item', env([null]), /result\[0\] is not an object/],
    ['metric array', env([{ metric: [], value: [1, '1'] }]), /metric is not an object/],
    ['label number', env([{ metric: { __name__: 'x', node: 7 }, value: [1, '1'] }]), /metric\.node is not a string/],
    ['bad label name', env([{ metric: { __name__: 'x', 'no-de': 'n' }, value: [1, '1'] }]), /label name "no-de"/],
    ['no name', env([{ metric: { node: 'n' }, value: [1, '1'] }]), /no valid __name__/],
    ['value number', env([{ ...ok, value: [1, 3] }]), /value\[1\] is not a string/],
    ['value words', env([{ ...ok, value: [1, 'three'] }]), /"three" is not a number/],
    ['value hex', env([{ ...ok, value: [1, '0x10'] }]), /"0x10" is not a number/],
    ['value 3 long', env([{ ...ok, value: [1, '3', 4] }]), /not \[time, "value"\]/],
    ['time string', env([{ ...ok, value: ['1', '3'] }]), /value\[0\] is not a Unix time/],
  ];
  for (const [name, body, why] of cases) {
    t.throws(() => parseQueryAnswer(body, 's'), PromAnswerError, name);
    t.throws(() => parseQueryAnswer(body, 's'), why, name);
  }
  t.same(parseQueryAnswer(env([], { warnings: ['x'] }), 's'), [], 'an empty vector is an answer');
  const proto = parseQueryAnswer(env([{ metric: { __name__: 'x', __proto__: 'n' }, value: [1, '1'] }]).replace('"x"', '"x","__proto__":"p"'), 's');
  t.equal(({} as Record<string, unknown>).p, undefined, 'a __proto__ label pollutes nothing');
  t.equal(proto[0]?.labels.get('__proto__'), 'p');
});

t.test('malformed textfiles: a clear error naming the line', async (t) => {
  const cases: [string, RegExp][] = [
    ['gdrgate_x{node="a"} ', /a value and at most a timestamp|space before/],
    ['gdrgate_x{node="a} 1', /unterminated value/],
    ['gdrgate_x{node="a\\t"} 1', /unknown escape/],
    ['gdrgate_x{node="a",node="b"} 1', /label node twice/],
    ['gdrgate_x{node="a" stat="b"} 1', /, or } expected/],
    ['gdrgate_x{=""} 1', /a label name expected/],
    ['gdrgate_x{node="a"}1', /space before the value/],
    ['gdrgate_x 1 2 3', /at most a timestamp/],
    ['gdrgate_x one', /"one" is not a number/],
    ['gdrgate_x 1 1.5', /timestamp/],
    ['9gdrgate 1', /a metric name expected/],
    ['{node="a"} 1', /a metric name expected/],
  ];
  for (const [line, why] of cases) {
    t.throws(() => parsePromText(`# HELP x y\n${line}\n`, 'f.prom'), PromTextError, line);
    t.throws(() => parsePromText(`# HELP x y\n${line}\n`, 'f.prom'), new RegExp(`f\\.prom: line 2: .*${why.source}`), line);
  }
  const s = parsePromText('a{b="x\\"y\\\\z\\n",} 1e3 1700000000000\nc NaN\nd +Inf\r\n', 'f');
  t.same(s.map((x) => [x.name, x.value, Object.fromEntries(x.labels)]), [['a', 1000, { b: 'x"y\\z\n' }], ['c', NaN, {}], ['d', Infinity, {}]]);
});

t.test('seeded mutations: an error of ours or figures that were in the input, never a crash or a made-up figure', async (t) => {
  const json = answerOf(allSeries());
  const text = FLEET[1]!.text;
  const rnd = seeded(20260301);
  const pieces = ['"', '{', '}', '[', ']', ',', ':', '0', '-1', 'NaN', '"+Inf"', 'null', '\\', '\n', 'e9', ' ', '="', 'node', 'p50'];
  const mutate = (s: string): string => {
    let m = s;
    for (let k = 1 + rnd.int(3); k > 0; k--) {
      const at = rnd.int(m.length);
      const op = rnd.int(3);
      m = op === 0 ? m.slice(0, at) + m.slice(at + 1 + rnd.int(8)) : op === 1 ? m.slice(0, at) + rnd.join(pieces, 1 + rnd.int(3)) + m.slice(at) : m.slice(0, at);
    }
    return m;
  };
  const inputP50s = new Set(allSeries().filter((s) => s.labels.get('stat') === 'p50').map((s) => s.value));
  let [errors, answers] = [0, 0];
  for (let i = 0; i < 1500; i++) {
    const isJson = i % 2 === 0;
    const m = mutate(isJson ? json : text);
    let r;
    try {
      r = statsFromSeries(isJson ? parseQueryAnswer(m, 'p') : parsePromText(m, 'f'));
    } catch (e) {
      if (!(e instanceof PromAnswerError || e instanceof PromTextError || e instanceof SeriesError)) throw new Error(`mutation ${i} threw ${String(e)}: ${JSON.stringify(m.slice(0, 300))}`);
      errors++;
      continue;
    }
    answers++;
    for (const s of r.stats) {
      if (!(Number.isFinite(s.p50) && s.p50 >= 0 && Number.isInteger(s.count) && s.count >= 1)) t.fail(`mutation ${i}: impossible figure ${JSON.stringify(s)}`);
      // A mutation may rewrite a digit of a value: the figure is then what the input said, never one we invented.
      if (!inputP50s.has(s.p50) && !m.includes(String(s.p50)) && !m.includes(s.p50.toExponential())) t.fail(`mutation ${i}: p50 ${s.p50} is nowhere in the input`);
    }
  }
  t.ok(errors > 100 && answers > 100, `${errors} refused, ${answers} answered`);
});

// ---------------------------------------------------------------------------------------------- over HTTP


t.test('loadPrometheus over HTTP: the queries asked, and a clear PrometheusError from a hostile server', async (t) => {
  const asked: string[] = [];
  const auth: string[] = [];
  const good = await serve(t, (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (req.headers.authorization) auth.push(req.headers.authorization);
    else asked.push(`${u.pathname} ${u.searchParams.get('query')} ${u.searchParams.get('time')}`);
    res.setHeader('content-type', 'application/json');
    const q = u.searchParams.get('query') ?? '';
    res.end(answerOf(allSeries().filter((s) => q.startsWith(s.name + '{'))));
  });
  const r = await loadPrometheus(`${good}/prom/`, { timeoutMs: 5000, now: 1_800_000_600_000 });
  t.equal(r.stats.length, FLEET.length * RAILS.length);
  t.ok(r.stats.every((s) => s.source === `prometheus:${good}/prom/`));
  t.same(asked.sort(), [
    '/prom/api/v1/query gdrgate_bandwidth_bytes_per_second{window="all",stat=~"p50|min"} 1800000600.000',
    '/prom/api/v1/query gdrgate_bandwidth_last_sample_timestamp_seconds{recipe!=""} 1800000600.000',
    '/prom/api/v1/query gdrgate_bandwidth_samples{window="all"} 1800000600.000',
  ]);
  t.notMatch((await loadPrometheus(good.replace('//', '//u:s%40cret@'), { timeoutMs: 5000 })).stats[0]?.source, /cret/, 'credentials in the URL never reported');
  t.same(auth, Array.from({ length: 3 }, () => `Basic ${Buffer.from('u:s@cret').toString('base64')}`), '... but sent as Basic authentication, once per query');

  const hostile: [string, Parameters<typeof createServer>[1], RegExp][] = [
    ['silent', () => undefined, /no complete answer within 300 ms/],
    ['endless', (_q, res) => { res.setHeader('content-type', 'application/json'); const w = (e?: Error | null) => void (e || res.destroyed || res.write('x'.repeat(65536), (e2) => setImmediate(w, e2))); w(); }, /longer than 1048576 bytes/],
    ['redirect', (_q, res) => { res.statusCode = 302; res.setHeader('location', 'http://elsewhere/'); res.end(); }, /redirected \(302\) to http:\/\/elsewhere\//],
    ['html', (_q, res) => { res.setHeader('content-type', 'text/html'); res.end('<html></html>'); }, /"text\/html", not application\/json/],
    ['422', (_q, res) => { res.statusCode = 422; res.setHeader('content-type', 'application/json'); res.end('{"status":"error","errorType":"execution","error":"query timed out"}'); }, /HTTP 422: .*"query timed out"/],
    ['502', (_q, res) => { res.statusCode = 502; res.end('bad gateway'); }, /HTTP 502: "bad gateway"/],
  ];
  for (const [name, h, why] of hostile) {
    const url = await serve(t, h);
    // Only the silent server is meant to meet the timeout; the others must fail for their own reason first, however
    // slowly a loaded machine streams (an endless answer reaches the 1 MiB cap long before 30 s).
    const timeoutMs = name === 'silent' ? 300 : 30_000;
    await t.rejects(loadPrometheus(url, { timeoutMs, maxBytes: 1 << 20 }), PrometheusError, name);
    await t.rejects(loadPrometheus(url, { timeoutMs, maxBytes: 1 << 20 }), why, name);
  }
  const closed = createServer();
  await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((res) => closed.close(() => res()));
  await t.rejects(loadPrometheus(`http://127.0.0.1:${port}`, { timeoutMs: 2000 }), /ECONNREFUSED/, 'nothing listening');
  await t.rejects(loadPrometheus('file:///etc/passwd', { timeoutMs: 100 }), /only http and https/);
  await t.rejects(loadPrometheus('not a url', { timeoutMs: 100 }), /is not a URL/);
  await t.rejects(loadPrometheus('http://h/?query=up', { timeoutMs: 100 }), /without a query/);
});

t.test('loadStatsFromTextfiles: the *.prom files of a directory, the same figures', async (t) => {
  const dir = scratchDir('gdrgate-textfiles-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of FLEET) writeFileSync(path.join(dir, `${f.node}.prom`), f.text);
  writeFileSync(path.join(dir, 'README'), 'not a textfile');
  mkdirSync(path.join(dir, 'sub.prom'));
  const r = await loadStatsFromTextfiles(dir);
  t.same(r.stats.map(({ source: _s, ...x }) => x), statsFromSeries(allSeries()).stats.map(({ source: _s, ...x }) => x));
  t.equal(r.stats.find((s) => s.node === 'gpu002')?.source, `textfile:${dir}/gpu002.prom`);
  writeFileSync(path.join(dir, 'bad.prom'), 'gdrgate_x{node="a} 1\n');
  await t.rejects(loadStatsFromTextfiles(dir), /bad\.prom: line 1: label node: unterminated value/);
  await t.rejects(loadStatsFromTextfiles(path.join(dir, 'absent')), TextfileError);
});

t.test('loadStatsFromTextfiles: a textfile of 150,000 series (within the size cap) is read, never a spread call past its bound', async (t) => {
  const dir = scratchDir('gdrgate-textfiles-many-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'gpu001.prom'), Array.from({ length: 150_000 }, (_, i) => `node_other_metric{i="${i}"} 1\n`).join(''));
  const r = await loadStatsFromTextfiles(dir);
  t.same(r.stats, []);
});
