// How the fleet report's work grows with its input, counted (array elements visited), not timed: a Prometheus
// answer's series, a node's spool files, a fleet read from its nodes' summaries and judged, and one node's figures on
// paths no other node has judged, at n and 4n, may cost at most what N log N allows, never N².
import t from 'tap';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildFleetReport } from '../../src/fleet/report.js';
import { readFleet } from '../../src/fleet/read.js';
import { sha256, type NodeSummary } from '../../src/fleet/summary.js';
import { generateRealFleet } from '../gen/fleet-real.js';
import { parseQueryAnswer } from '../../src/fleet/prom-answer.js';
import { scanFleetDir } from '../../src/fleet/inputs.js';
import { statsFromSeries } from '../../src/fleet/series.js';
import { spoolStatsInTurns } from '../../src/fleet/spool-stats.js';
import { countVisits, nLogNBound } from '../helpers/ops.js';
import type { NodePathStat } from '../../src/fleet/types.js';

/** Ages judged as of the answers' time (--max-age's default): every figure here is current. */
const AGE = { now: 1_800_000_000_000, maxAgeMs: 7 * 86_400_000 };

/** An instant-query answer of `paths` paths of one node (a hostile or a huge exporter), p50 and count each. */
function answer(paths: number): string {
  const result: unknown[] = [];
  for (let i = 0; i < paths; i++) {
    const labels = { node: 'gpu0001', probe: `p${i}`, gpu: '0000:18:00.0', nic: 'mlx5_0', direction: 'gpu->nic', recipe: 'r1', window: 'all', instance: 'gpu0001:9100', job: 'node' };
    result.push({ metric: { __name__: 'gdrgate_bandwidth_bytes_per_second', stat: 'p50', ...labels }, value: [1_800_000_000, '4.9e10'] });
    result.push({ metric: { __name__: 'gdrgate_bandwidth_samples', ...labels }, value: [1_800_000_000, '5'] });
    const { window: _w, ...dated } = labels;
    result.push({ metric: { __name__: 'gdrgate_bandwidth_last_sample_timestamp_seconds', ...dated }, value: [1_800_000_000, '1799999000'] });
  }
  return JSON.stringify({ status: 'success', data: { resultType: 'vector', result } });
}

t.test('a Prometheus answer: parsing and grouping its series grow no faster than N log N', async (t) => {
  const n = 4000;
  const [small, big] = [answer(n), answer(4 * n)];
  const a = await countVisits(() => statsFromSeries(parseQueryAnswer(small, 'prometheus:x'), 'all', true, AGE));
  const b = await countVisits(() => statsFromSeries(parseQueryAnswer(big, 'prometheus:x'), 'all', true, AGE));
  t.equal(a.value.stats.length, n);
  t.equal(b.value.stats.length, 4 * n);
  t.same(b.value.missing, [], 'every path dated and current');
  t.ok(b.visits / a.visits <= nLogNBound(n), `4x the series: ${(b.visits / a.visits).toFixed(2)}x the work (N log N allows ${nLogNBound(n).toFixed(2)}x)`);
});

t.test("one node's spool files in the fleet directory: scanning and reading them grow no faster than N log N", async (t) => {
  const line = (k: number): string =>
    `${JSON.stringify({ v: 1, ts: 1_800_000_000_000 + k, node: 'gpu0001', job: '1', probe: 'p', recipeHash: 'x' })}\n`;
  const visits = async (files: number): Promise<number> => {
    const dir = t.testdir({});
    for (let k = 1; k <= files; k++) writeFileSync(path.join(dir, `gpu0001.samples.${k}.jsonl`), line(k));
    const r = await countVisits(async () => {
      const inputs = scanFleetDir(dir);
      return { inputs, stats: await spoolStatsInTurns(inputs.spools, 1e9, AGE) };
    });
    t.equal(r.value.inputs.spools.get('gpu0001')?.length, files, `${files} files listed`);
    return r.visits;
  };
  const n = 1500;
  const [a, b] = [await visits(n), await visits(4 * n)];
  t.ok(b / a <= nLogNBound(n), `4x the files: ${(b / a).toFixed(2)}x the work (N log N allows ${nLogNBound(n).toFixed(2)}x)`);
});

t.test('a fleet read from its summaries and judged: the work grows no faster than N log N', async (t) => {
  // The views of a small realistic fleet (every fault kind among them), given to n nodes in turn: each node its own
  // snapshot bytes and a summary of them, as a node writes it.
  const seed = path.join(t.testdir(), 'seed');
  const plan = await generateRealFleet(seed, { n: 12, seed: 3, summaries: true, spools: false });
  // Without spools a weak rail is a clean tree: the others differ from the majority.
  const faulty = plan.map((p) => p.fault !== null && p.fault.kind !== 'weak-rail');
  const views = readdirSync(seed)
    .filter((f) => f.endsWith('.summary.json'))
    .sort()
    .map((f) => (JSON.parse(readFileSync(path.join(seed, f), 'utf8')) as NodeSummary).view);
  const fleet = (n: number): string => {
    const dir = path.join(t.testdir(), `fleet-${n}`);
    mkdirSync(dir);
    for (let i = 0; i < n; i++) {
      const node = `gpu${String(i + 1).padStart(5, '0')}`;
      const snap = Buffer.from(`the snapshot of ${node}`);
      writeFileSync(path.join(dir, `${node}.tar.gz`), snap);
      const s: NodeSummary = { format: 'gdrgate-node-summary/1', node, gdrgate: 'test', snapshot: { file: `${node}.tar.gz`, bytes: snap.length, sha256: sha256(snap), time: '2026-12-01T10:00:00.000Z' }, hostname: node, pciUnknown: null, view: views[i % views.length]! };
      writeFileSync(path.join(dir, `${node}.summary.json`), JSON.stringify(s));
    }
    return dir;
  };
  const visits = async (n: number): Promise<number> => {
    const dir = fleet(n);
    const r = await countVisits(async () => {
      const inputs = scanFleetDir(dir);
      const { read, missing } = await readFleet(inputs.snapshots, { workers: 0 });
      return buildFleetReport({ dir, nodes: read, classOf: () => 'hgx', stats: [], missing: [], broken: missing, problems: [] });
    });
    t.equal(r.value.summary.fromSummary, n, `${n} nodes judged from their summaries`);
    t.equal(r.value.summary.flagged, Array.from({ length: n }, (_, i) => faulty[i % 12]).filter(Boolean).length, 'the nodes given a faulty tree\'s view, and no other, flagged');
    return r.visits;
  };
  const n = 150;
  const [a, b] = [await visits(n), await visits(4 * n)];
  t.ok(b / a <= nLogNBound(n), `4x the nodes: ${(b / a).toFixed(2)}x the work (N log N allows ${nLogNBound(n).toFixed(2)}x)`);
});

t.test('one node naming paths no other node measured (a hostile spool or exporter): judging grows no faster than N log N', async (t) => {
  const stat = (node: string, k: number): NodePathStat => ({ node, probe: 'ib-write-gpu', recipeHash: '0bb1817a553a', gpu: `${(k >> 5).toString(16).padStart(4, '0')}:${(k & 31).toString(16).padStart(2, '0')}:00.0`, nic: 'mlx5_0', direction: 'gpu->nic', p50: 49e9, min: 48e9, count: 5, source: 'spool:x' });
  const visits = async (paths: number): Promise<number> => {
    const stats = ['gpu0002', 'gpu0003', 'gpu0004'].map((n) => stat(n, 0));
    for (let k = 1; k <= paths; k++) stats.push(stat('gpu0001', k));
    const r = await countVisits(() => buildFleetReport({ dir: 'f', nodes: [], classOf: () => 'fleet', stats, missing: [], problems: [] }));
    t.strictSame(r.value.nodes.find((v) => v.node === 'gpu0001')?.notes, [`ib-write-gpu 0000:01:00.0↔mlx5_0 gpu->nic and ${paths - 1} more path(s): measured by fewer than 3 nodes of the class, no band: not judged`]);
    return r.visits;
  };
  const n = 1000;
  const [a, b] = [await visits(n), await visits(4 * n)];
  t.ok(b / a <= nLogNBound(n), `4x the paths: ${(b / a).toFixed(2)}x the work (N log N allows ${nLogNBound(n).toFixed(2)}x)`);
});
