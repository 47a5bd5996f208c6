// Host names are one whatever their case, and a short name is its full one's host, for every input: a Prometheus
// `node` label or a collect summary's name that is a snapshot's name in another case, or its full or short name, is
// that node (never a node of its own); two spellings in one Prometheus answer are one host's figures under two
// names: none counted, each name says why.
import t, { type Test } from 'tap';
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { statsSources } from '../../src/cli/fleet.js';
import { parsePromText } from '../../src/fleet/prom-text.js';
import { runFleetReport } from '../../src/fleet/report-command.js';
import type { Series } from '../../src/fleet/series.js';
import { generateFleet } from '../gen/fleet.js';
import { nodeTextfile } from './_prom-fleet.js';

const CLEAN = { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 };
const NODES = ['gpu0001', 'gpu0002', 'gpu0003', 'gpu0004', 'gpu0005'];

/** A Prometheus serving each node's epilog textfile under the `node` label `label(node)`, scraped from `node:9100`. */
async function prometheus(t: Test, label: (node: string) => string[], host = (node: string): string => node): Promise<string> {
  const series: { s: Series; instance: string }[] = NODES.flatMap((node, i) => label(node).flatMap((l) => parsePromText(nodeTextfile(l, false, 21 + i).text, `textfile:${l}.prom`).map((s) => ({ s, instance: `${host(node)}:9100` }))));
  const srv: Server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('query') ?? '';
    res.setHeader('content-type', 'application/json');
    const result = series.filter(({ s }) => q.startsWith(`${s.name}{`)).map(({ s, instance }) => ({ metric: { __name__: s.name, ...Object.fromEntries(s.labels), instance, job: 'node' }, value: [1_800_000_600, String(s.value)] }));
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }));
  });
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', res));
  t.teardown(() => new Promise<void>((res) => { srv.closeAllConnections(); srv.close(() => res()); }));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

t.test('node="GPU0005" from gpu0005\'s exporter: gpu0005\'s figures, five nodes, all ok', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 5, seed: 4, rates: CLEAN, spools: false });
  const url = await prometheus(t, (n) => [n === 'gpu0005' ? 'GPU0005' : n]);
  const r = (await runFleetReport({ dir, baseline: null, sources: statsSources({ prometheus: url }) })).report;
  t.strictSame(r.nodes.map((v) => [v.node, v.status, v.notes]), NODES.map((n) => [n, 'ok', []]));
  t.strictSame(r.classes[0]!.paths.map((p) => p.points.length), [5, 5, 5]);
  t.equal(r.exitCode, 0);
});

t.test('node="gpu0004.cluster.example" from its exporter, gpu0004.tar.gz here: gpu0004\'s figures, five nodes, all ok', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 5, seed: 4, rates: CLEAN, spools: false });
  const full = (n: string): string => (n === 'gpu0004' ? 'gpu0004.cluster.example' : n);
  const url = await prometheus(t, (n) => [full(n)], full);
  const r = (await runFleetReport({ dir, baseline: null, sources: statsSources({ prometheus: url }) })).report;
  t.strictSame(r.nodes.map((v) => [v.node, v.status, v.notes]), NODES.map((n) => [n, 'ok', []]), 'before: a sixth node gpu0004.cluster.example, gpu0004 with no figures');
  t.strictSame(r.classes[0]!.paths.map((p) => p.points.length), [5, 5, 5]);
  t.equal(r.exitCode, 0);
});

t.test('node="gpu0003.cluster" and node="gpu0003" in one answer from gpu0003.cluster: neither counted, gpu0003 says why', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 5, seed: 4, rates: CLEAN, spools: false });
  const url = await prometheus(t, (n) => (n === 'gpu0003' ? ['gpu0003.cluster', 'gpu0003'] : [n]), (n) => (n === 'gpu0003' ? 'gpu0003.cluster' : n));
  const r = (await runFleetReport({ dir, baseline: null, sources: statsSources({ prometheus: url }) })).report;
  const src = `prometheus ${url}`;
  const why = `${src}: series labelled node="gpu0003", node="gpu0003.cluster": names that are one host's (the same but for case, or a short name and its full one), so which are the node's cannot be told; none counted`;
  t.strictSame(r.nodes.map((v) => [v.node, v.status, v.notes]), [
    ['gpu0003', 'incomplete', [why, `no data from ${src}`]],
    ...NODES.filter((n) => n !== 'gpu0003').map((n) => [n, 'ok', []]),
  ]);
  t.equal(r.exitCode, 1);
});

t.test('node="GPU0003" and node="gpu0003" in one answer: neither counted, gpu0003 says why', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 5, seed: 4, rates: CLEAN, spools: false });
  const url = await prometheus(t, (n) => (n === 'gpu0003' ? ['GPU0003', 'gpu0003'] : [n]));
  const r = (await runFleetReport({ dir, baseline: null, sources: statsSources({ prometheus: url }) })).report;
  const src = `prometheus ${url}`;
  const why = `${src}: series labelled node="GPU0003", node="gpu0003": names that are one host's (the same but for case, or a short name and its full one), so which are the node's cannot be told; none counted`;
  t.strictSame(r.nodes.map((v) => [v.node, v.status, v.notes]), [
    ['gpu0003', 'incomplete', [why, `no data from ${src}`]],
    ...NODES.filter((n) => n !== 'gpu0003').map((n) => [n, 'ok', []]),
  ]);
  t.equal(r.exitCode, 1);
});

t.test("a collect summary naming gpu0002.cluster.example missing, gpu0002's snapshot here: the snapshot counts, no sixth node", async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 5, seed: 4, rates: CLEAN });
  writeFileSync(path.join(dir, 'gdrgate-collect.json'), JSON.stringify({ nodes: 5, answered: [{ node: 'gpu0001' }], missing: [{ node: 'gpu0002.cluster.example', why: 'no snapshot written (srun exited 1)' }], srun: null }));
  const r = (await runFleetReport({ dir, baseline: null })).report;
  t.strictSame(r.nodes.map((v) => [v.node, v.status]), NODES.map((n) => [n, 'ok']), 'before: a sixth node gpu0002.cluster.example, missing');
  t.equal(r.exitCode, 0);
});

t.test("a collect summary naming GPU0002 missing, gpu0002's snapshot here: the snapshot counts, no sixth node", async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 5, seed: 4, rates: CLEAN });
  writeFileSync(path.join(dir, 'gdrgate-collect.json'), JSON.stringify({ nodes: 5, answered: [{ node: 'GPU0001' }], missing: [{ node: 'GPU0002', why: 'no snapshot written (srun exited 1)' }], srun: null }));
  const r = (await runFleetReport({ dir, baseline: null })).report;
  t.strictSame(r.nodes.map((v) => [v.node, v.status]), NODES.map((n) => [n, 'ok']));
  t.equal(r.exitCode, 0);
});
