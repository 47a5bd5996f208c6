// Every way a node's input can be missing or broken: the node is listed with the right state and why, the report
// never says "all agree" about a node it did not judge, and a bad input for one node never ends the report.
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, rmSync, copyFileSync, chmodSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { statsSources } from '../../src/cli/fleet.js';
import { parsePromText } from '../../src/fleet/prom-text.js';
import { runFleetReport } from '../../src/fleet/report-command.js';
import type { FleetReport, NodeVerdict } from '../../src/fleet/report.js';
import { renderFleetText } from '../../src/fleet/text.js';
import { writeTar } from '../../src/snapshot/tar.js';
import { generateFleet } from '../gen/fleet.js';
import { CLI } from '../helpers/paths.js';
import { validate } from '../helpers/schema.js';
import { nodeTextfile } from './_prom-fleet.js';

const CLEAN = { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 };

const verdict = (r: FleetReport, node: string): NodeVerdict | undefined => r.nodes.find((v) => v.node === node);

function expectState(t: Test, r: FleetReport, node: string, status: NodeVerdict['status'], notes: readonly string[], what: string): void {
  const v = verdict(r, node);
  t.equal(v?.status, status, `${what}: ${node} is ${status}`);
  t.same(v?.notes, notes, `${what}: ${node} says why, every note`);
}

async function serve(t: Test, handler: Parameters<typeof createServer>[1]): Promise<string> {
  const srv: Server = createServer(handler);
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', res));
  t.teardown(() => new Promise<void>((res) => { srv.closeAllConnections(); srv.close(() => res()); }));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

/** A Prometheus answering for `nodes` only (the others' exporters down: their series gone stale). */
async function prometheus(t: Test, nodes: readonly { node: string; slow: boolean }[]): Promise<string> {
  const series = nodes.flatMap((n, i) => parsePromText(nodeTextfile(n.node, n.slow, 21 + i).text, `textfile:${n.node}.prom`));
  return serve(t, (req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('query') ?? '';
    res.setHeader('content-type', 'application/json');
    const result = series.filter((s) => q.startsWith(`${s.name}{`)).map((s) => ({ metric: { __name__: s.name, ...Object.fromEntries(s.labels), instance: `${s.labels.get('node')}:9100`, job: 'node' }, value: [1_800_000_600, String(s.value)] }));
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }));
  });
}

t.test('three nodes, the slow one\'s exporter down: listed as not judged on bandwidth, exit 1, never "all agree"', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 3, seed: 3, rates: CLEAN, spools: false });
  const all = ['gpu0001', 'gpu0002', 'gpu0003'];
  const full = await prometheus(t, all.map((node) => ({ node, slow: node === 'gpu0002' })));
  const up = await runFleetReport({ dir, baseline: null, sources: statsSources({ prometheus: full }) });
  t.equal(verdict(up.report, 'gpu0002')?.status, 'differs', 'every exporter up: the slow node is flagged');
  const down = await prometheus(t, [{ node: 'gpu0001', slow: false }, { node: 'gpu0003', slow: false }]);
  const r = (await runFleetReport({ dir, baseline: null, sources: statsSources({ prometheus: down }) })).report;
  expectState(t, r, 'gpu0002', 'incomplete', [`no data from prometheus ${down}`], 'exporter down');
  t.equal(r.exitCode, 1);
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
  const text = renderFleetText(r);
  t.notMatch(text, /agree with their class \(exit 0\)/);
  t.same(text.split('\n').filter((l) => l.startsWith('result: ')), ['result: 0 of 3 nodes differ from their class; 3 not fully judged (0 unreadable, 0 missing, 3 judged in part) (exit 1)']);
  t.same(text.split('\n').filter((l) => l.startsWith('gpu0002 ')), [`gpu0002  INCOMPLETE  not judged: no data from prometheus ${down}`]);
});

t.test('every broken input of a node: listed with its state and why; the other nodes still judged', async (t) => {
  const root = t.testdir();
  const dir = path.join(root, 'fleet');
  await generateFleet(dir, { n: 16, seed: 9, rates: CLEAN });
  const snap = (n: number): string => path.join(dir, `gpu${String(n).padStart(4, '0')}.tar.gz`);
  const spool = (n: number): string => path.join(dir, `gpu${String(n).padStart(4, '0')}.samples.jsonl`);
  const good = readFileSync(snap(16));
  const manifest = JSON.stringify({ tool: 'gdrgate', kind: 'snapshot', format: 1, version: '0.1.0', host: 'gpu0005', missing: [] });
  // Nodes 1-8: the snapshot broken, the spool removed (nothing of the node can be read).
  const gzipEnd = (n: number): string => `${snap(n)}: not a readable gzip stream: unexpected end of file`;
  const cases: [number, string, (f: string) => void, string][] = [
    [1, 'symlinked snapshot', (f) => (rmSync(f), symlinkSync(snap(16), f)), 'gpu0001.tar.gz: the snapshot is a symbolic link, not a regular file: not read'],
    [2, "another node's snapshot under its name", (f) => copyFileSync(snap(16), f), 'the snapshot was taken on "gpu0016", not on gpu0002: not judged as gpu0002'],
    [3, 'truncated gzip', (f) => writeFileSync(f, good.subarray(0, Math.floor(good.length / 2))), gzipEnd(3)],
    [4, 'garbage gzip', (f) => writeFileSync(f, Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0]), Buffer.alloc(200, 0x5a)])), gzipEnd(4)],
    [5, 'manifest-only snapshot', (f) => writeFileSync(f, gzipSync(writeTar([{ path: 'manifest.json', kind: 'file', mode: 0o644, mtime: 0, data: Buffer.from(manifest) }]))), "the snapshot's PCI device list is unknown (/sys/bus/pci/devices: not recorded by this snapshot (taken by gdrgate 0.1.0): /sys)"],
    [6, 'empty file', (f) => writeFileSync(f, ''), `${snap(6)}: not a snapshot archive: truncated archive: no end-of-archive block after offset 0`],
    [7, 'a directory named as a snapshot', (f) => (rmSync(f), mkdirSync(f)), 'gpu0007.tar.gz: the snapshot is a directory, not a regular file: not read'],
    [8, 'a tar that is not a snapshot', (f) => writeFileSync(f, gzipSync(writeTar([{ path: 'x', kind: 'file', mode: 0o644, mtime: 0, data: Buffer.from('x') }]))), `${snap(8)}: not a snapshot archive: no manifest.json: not written by gdrgate snapshot`],
  ];
  for (const [n, , breakIt] of cases) {
    breakIt(snap(n));
    rmSync(spool(n));
  }
  // Nodes 9-13: the snapshot fine, the spool broken: judged on facts, not on bandwidth.
  writeFileSync(spool(9), '');
  rmSync(spool(10));
  symlinkSync(spool(16), spool(10));
  rmSync(spool(11));
  mkdirSync(path.join(dir, 'gpu0011.spool'));
  symlinkSync(spool(16), path.join(dir, 'gpu0011.spool', 'samples.jsonl'));
  rmSync(spool(12));
  mkdirSync(path.join(dir, 'gpu0012.spool'));
  writeFileSync(path.join(dir, 'gpu0012.spool', 'samples.jsonl'), readFileSync(spool(16), 'utf8').replaceAll('gpu0016', 'gpu0012'));
  chmodSync(path.join(dir, 'gpu0012.spool'), 0o000);
  t.teardown(() => rmSync(path.join(dir, 'gpu0012.spool'), { recursive: true, force: true }));
  rmSync(spool(13));
  writeFileSync(spool(13), 'garbage\n{"not":"a sample"}\n');
  // Node 14: a spool, no snapshot. Node 20: named by fleet collect, nothing in the directory.
  rmSync(snap(14));
  writeFileSync(path.join(dir, 'gdrgate-collect.json'), JSON.stringify({ missing: [{ node: 'gpu0020', why: 'srun: node not responding' }] }));
  // A Prometheus that is not one (an HTML page): every node lacks its figures; the report goes on.
  const html = await serve(t, (_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<html>login</html>');
  });
  const run = await runFleetReport({ dir, baseline: null, sources: statsSources({ prometheus: html }) });
  const r = run.report;
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
  const spools = 'no data from the spools';
  const prom = `no data from prometheus ${html}: the answer is "text/html", not application/json (is this Prometheus's base URL?)`;
  for (const [n, what, , why] of cases) expectState(t, r, `gpu${String(n).padStart(4, '0')}`, 'unreadable', [why, spools, prom], what);
  expectState(t, r, 'gpu0009', 'incomplete', ['its spool holds no sample of gpu0009 (empty)', spools, prom], 'empty spool file');
  expectState(t, r, 'gpu0010', 'incomplete', ['gpu0010.samples.jsonl: the spool file is a symbolic link, not a regular file: not read', spools, prom], 'symlinked spool file');
  expectState(t, r, 'gpu0011', 'incomplete', [`no spool file could be read: ${path.join(dir, 'gpu0011.spool', 'samples.jsonl')} is a symbolic link`, spools, prom], 'spool directory of links only');
  // Root reads a directory whatever its mode: there the spool is read, and judged.
  if (process.geteuid?.() === 0) expectState(t, r, 'gpu0012', 'incomplete', [prom], 'root: the spool directory is read');
  // Not compared whole: the tests run as root here, so this note was never seen.
  else t.ok(verdict(r, 'gpu0012')?.notes.some((n) => /cannot be listed/.test(n)), 'unreadable spool directory: gpu0012 says why');
  expectState(t, r, 'gpu0013', 'incomplete', ['2 corrupt spool lines skipped (no sample: bad JSON, a field out of range or a figure no link carries), not judged', spools, prom], 'a spool of corrupt lines');
  expectState(t, r, 'gpu0014', 'incomplete', ['no snapshot: its facts are not judged', prom], 'a spool without a snapshot');
  expectState(t, r, 'gpu0020', 'missing', ['fleet collect: srun: node not responding', spools, prom], 'named by fleet collect');
  expectState(t, r, 'gpu0015', 'incomplete', [prom], 'a --prometheus that is not Prometheus');
  t.same(r.problems, [prom.slice('no data from '.length)], "the source's failure is a problem of the report, the only one");
  // Every node named anywhere has a verdict, none twice; the exit code says not everything was judged.
  const names = r.nodes.map((v) => v.node).sort();
  t.same(names, [...Array.from({ length: 16 }, (_, i) => `gpu${String(i + 1).padStart(4, '0')}`), 'gpu0020'].sort());
  t.equal(r.summary.clean, 0, 'with no figures from the Prometheus asked for, no node is fully judged');
  t.equal(r.exitCode, 1);
  // The majority's counts are out of the snapshots read, and the unreadable are named with why.
  const cls = r.classes[0]!;
  t.equal(cls.read, 7, 'the snapshots of gpu0009-0013, gpu0015 and gpu0016 read');
  t.same(cls.unread.map((m) => m.node).sort(), ['gpu0001', 'gpu0002', 'gpu0003', 'gpu0004', 'gpu0005', 'gpu0006', 'gpu0007', 'gpu0008', 'gpu0014', 'gpu0020']);
  const text = renderFleetText(r);
  const gzip = (n: number): string => `gpu000${n} (${snap(n)}: not a readable gzip stream: unexpected end of file)`;
  const unreadLine = `class fleet: 17 nodes, 7 snapshots read, 10 not: gpu0001 (gpu0001.tar.gz: the snapshot is a symbolic link, not a regular file: not read), gpu0002 (the snapshot was taken on "gpu0016", not on gpu0002: not judged as gpu0002), ${gzip(3)}, ${gzip(4)}, +6 more; majority as on gpu0009`;
  t.same(text.split('\n').filter((l) => l.startsWith('class ')), [unreadLine]);

  // The CLI: exit 1, the report printed, no stack trace.
  // Spawned without blocking: the server answering it lives in this process.
  const c = await new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
    const p = execFile(process.execPath, [CLI, 'fleet', 'report', dir, '--prometheus', html], { timeout: 120_000 }, (e, stdout, stderr) => res({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, stdout, stderr }));
    p.stdin?.end();
  });
  t.equal(c.code, 1, c.stderr);
  t.equal(c.stderr, '', 'nothing on stderr: no internal error, no stack trace');
  t.same(c.stdout.split('\n').filter((l) => l.startsWith('result: ')), ['result: 0 of 17 nodes differ from their class; 17 not fully judged (8 unreadable, 1 missing, 8 judged in part) (exit 1)']);
});

t.test('a spool that gives its node no figure (empty, only a torn line, only another node\'s samples, an empty spool directory): the node is listed, never left out', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 2, seed: 5, rates: CLEAN });
  const other = readFileSync(path.join(dir, 'gpu0001.samples.jsonl'), 'utf8');
  writeFileSync(path.join(dir, 'gpu0009.samples.jsonl'), '');
  writeFileSync(path.join(dir, 'gpu0010.samples.jsonl'), other.split('\n')[0]!.slice(0, 40));
  writeFileSync(path.join(dir, 'gpu0011.samples.jsonl'), other);
  mkdirSync(path.join(dir, 'gpu0012.spool'));
  const r = (await runFleetReport({ dir, baseline: null })).report;
  t.same(['gpu0009', 'gpu0010', 'gpu0011', 'gpu0012'].map((n) => [verdict(r, n)?.status, verdict(r, n)?.notes]), [
    ['unreadable', ['its spool holds no sample of gpu0009 (empty)', 'no data from the spools']],
    ['unreadable', ['its spool holds no sample of gpu0010 (lines: 1 torn)', 'no data from the spools']],
    ['unreadable', [`its spool holds no sample of gpu0011 (lines: ${other.trimEnd().split('\n').length} of another node)`, 'no data from the spools']],
    ['unreadable', ['its spool holds no sample of gpu0012 (empty)', 'no data from the spools']],
  ]);
  t.equal(r.exitCode, 1, 'before: "4 nodes … all agree (exit 0)"');
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
});

t.test("inputs whose names differ only in case (one host's, copied under two names): judged from none, every name listed", async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 3, seed: 5, rates: CLEAN });
  copyFileSync(path.join(dir, 'gpu0002.tar.gz'), path.join(dir, 'GPU0002.tar'));
  copyFileSync(path.join(dir, 'gpu0002.tar.gz'), path.join(dir, 'Gpu0002.tgz'));
  copyFileSync(path.join(dir, 'gpu0003.samples.jsonl'), path.join(dir, 'GPU0003.samples.jsonl'));
  const r = (await runFleetReport({ dir, baseline: null })).report;
  const why = (names: string): string => `inputs named ${names}: names that are one host's (the same but for case, or a short name and its full one), so which is the node now cannot be told; judged from none (keep one name)`;
  t.same(r.nodes.map((v) => [v.node, v.status, v.notes[0]]), [
    // The one node judged has no class to be banded against: not judged on its rails.
    ['gpu0001', 'incomplete', 'ib-write-gpu 0000:18:00.0↔mlx5_0 gpu->nic and 7 more path(s): measured by fewer than 3 nodes of the class, no band: not judged'],
    ['GPU0002', 'unreadable', why('GPU0002, Gpu0002, gpu0002')],
    ['GPU0003', 'unreadable', why('GPU0003, gpu0003')],
    ['Gpu0002', 'unreadable', why('GPU0002, Gpu0002, gpu0002')],
    ['gpu0002', 'unreadable', why('GPU0002, Gpu0002, gpu0002')],
    ['gpu0003', 'unreadable', why('GPU0003, gpu0003')],
  ]);
  t.equal(r.summary.read, 1, 'before: 5 nodes read, gpu0002 three times in the majority');
  t.equal(r.exitCode, 1);
});

t.test("a snapshot under the node's full name beside its short one (one host's): judged from neither, both listed", async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 3, seed: 5, rates: CLEAN, spools: false });
  copyFileSync(path.join(dir, 'gpu0002.tar.gz'), path.join(dir, 'gpu0002.cluster.example.tar.gz'));
  const r = (await runFleetReport({ dir, baseline: null })).report;
  const why = "inputs named gpu0002, gpu0002.cluster.example: names that are one host's (the same but for case, or a short name and its full one), so which is the node now cannot be told; judged from none (keep one name)";
  t.same(r.nodes.filter((v) => v.node.startsWith('gpu0002')).map((v) => [v.node, v.status, v.notes]), [
    ['gpu0002', 'unreadable', [why]],
    ['gpu0002.cluster.example', 'unreadable', [why]],
  ]);
  t.equal(r.summary.read, 2, 'before: 4 nodes read, gpu0002 twice in the majority');
  t.equal(r.exitCode, 1);
});

t.test('2,000 full names of one short one: each says the first five names and how many more, never all of them', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 3, seed: 5, rates: CLEAN, spools: false });
  for (let i = 0; i < 2000; i++) writeFileSync(path.join(dir, `gpu0002.r${i}.tar.gz`), '');
  const r = (await runFleetReport({ dir, baseline: null })).report;
  const why = "inputs named gpu0002, gpu0002.r0, gpu0002.r1, gpu0002.r2, gpu0002.r3 and 1996 more: names that are one host's (the same but for case, or a short name and its full one), so which is the node now cannot be told; judged from none (keep one name)";
  const twins = r.nodes.filter((v) => v.node.startsWith('gpu0002'));
  t.equal(twins.length, 2001);
  t.same([...new Set(twins.map((v) => JSON.stringify([v.status, v.notes])))], [JSON.stringify(['unreadable', [why]])], 'before: each note named all 2,001 inputs (36 KB a note, 72 MB in all)');
});

t.test('an input in a case or a packing fleet does not read is a problem said, never skipped silently; other files are nobody\'s business', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 3, seed: 6, rates: CLEAN });
  for (const [from, to] of [
    ['gpu0002.tar.gz', 'GPU0004.TAR.GZ'],
    ['gpu0002.tar.gz', 'gpu0005.Tgz'],
    ['gpu0002.tar.gz', 'gpu0006.tar.zst'],
    ['gpu0003.samples.jsonl', 'gpu0007.SAMPLES.jsonl'],
    ['gpu0003.samples.jsonl', 'gpu0008.samples.1.jsonl.gz'],
    ['gpu0003.samples.jsonl', 'README.txt'],
    ['gpu0003.samples.jsonl', 'report.html'],
  ] as const) copyFileSync(path.join(dir, from), path.join(dir, to));
  const r = (await runFleetReport({ dir, baseline: null })).report;
  const CASE = ': not read: fleet reads <node>.tar.gz, .tgz, .tar, .samples.jsonl, .samples.<n>.jsonl, .spool and .summary.json, their suffix in lower case';
  const PACKED = ': not read: packed in a way fleet does not read (a snapshot is <node>.tar.gz, .tgz or .tar; a spool is read unpacked)';
  t.same(r.problems, [
    `GPU0004.TAR.GZ${CASE}`,
    `gpu0005.Tgz${CASE}`,
    `gpu0006.tar.zst${PACKED}`,
    `gpu0007.SAMPLES.jsonl${CASE}`,
    `gpu0008.samples.1.jsonl.gz${PACKED}`,
  ]);
  t.same(r.nodes.map((v) => v.node), ['gpu0001', 'gpu0002', 'gpu0003'], 'README.txt and report.html: not said, not nodes');
  t.equal(r.exitCode, 1, 'before: exit 0, "3 nodes … all agree", five inputs left out without a word');
});
