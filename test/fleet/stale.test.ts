// fleet report --max-age: spool and Prometheus figures, and snapshots, older than max-age or stamped ahead of the
// clock are not judged as the node now; the node is judged in part, says which and when, and the report exits 1.
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { serve } from '../helpers/http-serve.js';
import { gunzipSync, gzipSync } from 'node:zlib';
import { statsSources } from '../../src/cli/fleet.js';
import { isoTime } from '../../src/fleet/age.js';
import { parsePromText } from '../../src/fleet/prom-text.js';
import { runFleetReport } from '../../src/fleet/report-command.js';
import type { FleetReport, NodeVerdict } from '../../src/fleet/report.js';
import { TS_METRIC } from '../../src/fleet/series.js';
import { renderFleetText } from '../../src/fleet/text.js';
import { GEN_TIME, generateFleet, gpuBdf } from '../gen/fleet.js';
import { CLI } from '../helpers/paths.js';
import { validate } from '../helpers/schema.js';
import { nodeTextfile } from './_prom-fleet.js';

const CLEAN = { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 };
const Y2000 = Date.UTC(2000, 0, 1);
const Y2100 = Date.UTC(2100, 0, 1);
const verdict = (r: FleetReport, node: string): NodeVerdict | undefined => r.nodes.find((v) => v.node === node);
const brief = (v: NodeVerdict | undefined): unknown => v && { status: v.status, notes: v.notes, rails: v.rails, snapshotTime: v.snapshotTime };
/** The rail whose GPU sorts first: the first path of a node's spool statistics. */
const first = [0, 1, 2, 3, 4, 5, 6, 7].sort((a, b) => (gpuBdf(a) < gpuBdf(b) ? -1 : 1))[0]!;
const path0 = (rail: number): string => `ib-write-gpu ${gpuBdf(rail)}→mlx5_${rail} gpu->nic`;

/** The node's spool with `ts` set on the samples of the rails `pick` chooses. */
function restamp(dir: string, node: string, ts: number, pick: (nic: string) => boolean): void {
  const f = path.join(dir, `${node}.samples.jsonl`);
  const lines = readFileSync(f, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { ts: number; nic: string });
  writeFileSync(f, lines.map((s) => JSON.stringify(pick(s.nic) ? { ...s, ts } : s)).join('\n') + '\n');
}

/** The node's snapshot with its manifest's time set to `iso` (same length: a tar checksums headers only). */
function retime(dir: string, node: string, iso: string): void {
  const f = path.join(dir, `${node}.tar.gz`);
  const tar = Buffer.from(gunzipSync(readFileSync(f)));
  const was = `"time": "${new Date(GEN_TIME).toISOString()}"`;
  const at = tar.indexOf(was);
  if (at < 0 || iso.length !== 24) throw new Error(`${node}: no manifest time ${was}`);
  tar.write(`"time": "${iso}"`, at, 'latin1');
  writeFileSync(f, gzipSync(tar));
}

t.test('spool figures: a rail from January 2000, a whole node from then, a rail from 2100; each said, none absent, exit 1', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 8, seed: 7, rates: CLEAN });
  restamp(dir, 'gpu0003', Y2000, (nic) => nic === 'mlx5_0');
  restamp(dir, 'gpu0005', Y2000, () => true);
  restamp(dir, 'gpu0006', Y2100, (nic) => nic === 'mlx5_1');
  const r = (await runFleetReport({ dir, baseline: null })).report;
  const taken = isoTime(GEN_TIME);
  t.same(brief(verdict(r, 'gpu0003')), { status: 'incomplete', notes: [`${path0(0)}: newest figure 2000-01-01T00:00:00Z, older than 7d, not judged`], rails: [], snapshotTime: taken });
  t.same(brief(verdict(r, 'gpu0005')), { status: 'incomplete', notes: [`${path0(first)}: newest figure 2000-01-01T00:00:00Z, older than 7d, not judged; +7 more`, 'no data from the spools'], rails: [], snapshotTime: taken });
  t.same(brief(verdict(r, 'gpu0006')), { status: 'incomplete', notes: ["5 spool samples stamped after this host's clock by more than 60 s (the newest 2100-01-01T00:00:00Z): their age cannot be told, not judged"], rails: [], snapshotTime: taken });
  t.same(r.nodes.filter((v) => v.status === 'ok').map((v) => v.node), ['gpu0001', 'gpu0002', 'gpu0004', 'gpu0007', 'gpu0008']);
  t.equal(r.exitCode, 1);
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
  const text = renderFleetText(r).split('\n');
  t.ok(text.includes(`gpu0003  INCOMPLETE  not judged: ${path0(0)}: newest figure 2000-01-01T00:00:00Z, older than 7d, not judged`), 'the text says it on the node');

  // A shorter max-age, judged as of half an hour past the generator's time: every figure and snapshot is too old.
  const late = (await runFleetReport({ dir, baseline: null, now: GEN_TIME + 31 * 60_000, maxAgeMs: 30 * 60_000 })).report;
  t.same(brief(verdict(late, 'gpu0001')), { status: 'unreadable', notes: [`${path0(first)}: newest figure ${isoTime(GEN_TIME + first * 1000)}, older than 30m, not judged; +7 more`, `snapshot taken ${taken}, older than 30m: its facts are not judged`, 'no data from the spools'], rails: [], snapshotTime: null });
  t.equal(late.summary.read, 0);
  t.equal(late.exitCode, 1);
});

t.test('the CLI: --max-age takes a duration, refuses anything else; stale figures exit 1', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 4, seed: 7, rates: CLEAN });
  restamp(dir, 'gpu0002', Y2000, (nic) => nic === 'mlx5_0');
  const run = (...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((res) => execFile(process.execPath, [CLI, 'fleet', 'report', dir, ...args], { timeout: 120_000 }, (e, stdout, stderr) => res({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, stdout, stderr })));
  const d = await run();
  t.equal(d.code, 1);
  t.ok(d.stdout.split('\n').includes(`gpu0002  INCOMPLETE  not judged: ${path0(0)}: newest figure 2000-01-01T00:00:00Z, older than 7d, not judged`), d.stdout);
  const wide = await run('--max-age', '36500d');
  t.equal(wide.code, 0, 'a century: the January 2000 figures are judged');
  for (const bad of ['0d', '7', '1.5d', '-1d', '7w', '36501d']) {
    const r = await run('--max-age', bad);
    t.equal(r.code, 2, `--max-age ${bad} refused`);
    t.ok(r.stderr.includes(`--max-age ${bad}: want a duration above 0 and at most 36500d`), r.stderr);
  }
});


t.test('Prometheus figures: the last-sample time is asked and judged; a path without one is judged and said for the source', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  // Five nodes: with gpu0002's and gpu0004's mlx5_1 figures not judged, three are left on that path to band it.
  await generateFleet(dir, { n: 5, seed: 3, rates: CLEAN, spools: false });
  const series = ['gpu0001', 'gpu0002', 'gpu0003', 'gpu0004', 'gpu0005'].flatMap((node, i) => parsePromText(nodeTextfile(node, false, 21 + i).text, `textfile:${node}.prom`))
    // gpu0002's textfile left behind in 2000; gpu0003's from an exporter that does not export the time; gpu0004 ahead.
    .filter((s) => !(s.name === TS_METRIC && s.labels.get('node') === 'gpu0003'))
    .map((s) => (s.name !== TS_METRIC ? s : s.labels.get('node') === 'gpu0002' ? { ...s, value: Y2000 / 1000 } : s.labels.get('node') === 'gpu0004' && s.labels.get('nic') === 'mlx5_1' ? { ...s, value: Y2100 / 1000 } : s));
  const url = await serve(t, (req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('query') ?? '';
    res.setHeader('content-type', 'application/json');
    const result = series.filter((s) => q.startsWith(`${s.name}{`)).map((s) => ({ metric: { __name__: s.name, ...Object.fromEntries(s.labels), instance: `${s.labels.get('node')}:9100`, job: 'node' }, value: [GEN_TIME / 1000, String(s.value)] }));
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }));
  });
  const r = (await runFleetReport({ dir, baseline: null, sources: statsSources({ prometheus: url }) })).report;
  const src = `prometheus ${url}`;
  t.same(brief(verdict(r, 'gpu0002')), { status: 'incomplete', notes: [`${src}: ib-write-gpu 0000:41:00.0→mlx5_0 gpu->nic->gpu: newest figure 2000-01-01T00:00:00Z, older than 7d, not judged; +2 more`, `no data from ${src}`], rails: [], snapshotTime: isoTime(GEN_TIME) });
  t.same(brief(verdict(r, 'gpu0004')), { status: 'incomplete', notes: [`${src}: ib-write-gpu 0000:82:00.0→mlx5_1 gpu->nic->gpu: newest figure 2100-01-01T00:00:00Z, more than 60 s ahead of this host's clock (its age cannot be told), not judged`], rails: [], snapshotTime: isoTime(GEN_TIME) });
  t.same(brief(verdict(r, 'gpu0003')), { status: 'ok', notes: [], rails: [], snapshotTime: isoTime(GEN_TIME) }, 'no time exported: judged');
  t.same(r.problems, [`${src}: 3 path(s) of 1 node(s) without a ${TS_METRIC} series (gpu0003): judged, their age cannot be told`]);
  t.equal(r.exitCode, 1);
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
});

t.test("snapshots: the manifest's time shown on every verdict; one from 2000 or from 2100 not judged, said", async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 6, seed: 7, rates: CLEAN });
  retime(dir, 'gpu0002', '2000-01-01T00:00:00.000Z');
  retime(dir, 'gpu0005', '2100-01-01T00:00:00.000Z');
  const r = (await runFleetReport({ dir, baseline: null })).report;
  t.same(brief(verdict(r, 'gpu0002')), { status: 'incomplete', notes: ['snapshot taken 2000-01-01T00:00:00Z, older than 7d: its facts are not judged'], rails: [], snapshotTime: null });
  t.same(brief(verdict(r, 'gpu0005')), { status: 'incomplete', notes: ["snapshot taken 2100-01-01T00:00:00Z, more than 60 s ahead of this host's clock (its age cannot be told): its facts are not judged"], rails: [], snapshotTime: null });
  t.same(r.nodes.filter((v) => v.status === 'ok').map((v) => [v.node, v.snapshotTime]), ['gpu0001', 'gpu0003', 'gpu0004', 'gpu0006'].map((n) => [n, isoTime(GEN_TIME)]));
  t.equal(r.summary.read, 4);
  // A time not as gdrgate writes it (an offset for Z; no time at all): its age cannot be told, never "judged as now".
  retime(dir, 'gpu0003', '2001-01-01T00:00:00+0000');
  retime(dir, 'gpu0004', 'no time anybody wrote...');
  const u = (await runFleetReport({ dir, baseline: null })).report;
  const untold = 'snapshot taken at a time its manifest does not say (none, or not as gdrgate writes it), so its age cannot be told: its facts are not judged';
  t.same(['gpu0003', 'gpu0004'].map((n) => brief(verdict(u, n))), [0, 1].map(() => ({ status: 'incomplete', notes: [untold], rails: [], snapshotTime: null })));
  t.equal(u.summary.read, 2);
  t.equal(r.exitCode, 1);
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
});
