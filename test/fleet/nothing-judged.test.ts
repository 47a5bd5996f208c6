// A fleet report never reads as healthy when it judged less than it shows: two snapshots of one node judge neither
// (the node listed naming both files), and a report that judged no node at all says so and exits 1.
import t from 'tap';
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { statsSources } from '../../src/cli/fleet.js';
import { renderFleetHtml } from '../../src/fleet/html.js';
import { runFleetReport } from '../../src/fleet/report-command.js';
import { renderFleetText } from '../../src/fleet/text.js';
import { generateFleet } from '../gen/fleet.js';
import { cli } from '../helpers/cli.js';
import { validate } from '../helpers/schema.js';

const CLEAN = { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 };

t.test('two snapshots of one node (gpu0001.tar beside gpu0001.tar.gz): neither judged, both named, exit 1', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 3, seed: 7, rates: CLEAN, spools: false });
  // An older copy of the same host left beside the current one: the same bytes, another name.
  copyFileSync(path.join(dir, 'gpu0001.tar.gz'), path.join(dir, 'gpu0001.tar'));
  const r = (await runFleetReport({ dir, baseline: null })).report;
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
  const v = r.nodes.find((x) => x.node === 'gpu0001');
  t.equal(v?.status, 'unreadable');
  t.same(v?.notes, ['2 snapshots: gpu0001.tar, gpu0001.tar.gz; judged from none (remove all but the current one)']);
  t.same(r.missing, [{ node: 'gpu0001', why: '2 snapshots: gpu0001.tar, gpu0001.tar.gz; judged from none (remove all but the current one)' }]);
  t.same(r.nodes.filter((x) => x.status === 'ok').map((x) => x.node), ['gpu0002', 'gpu0003']);
  t.equal(r.summary.read, 2);
  t.equal(r.exitCode, 1);
  const text = renderFleetText(r).split('\n');
  t.ok(text.includes('  gpu0001: 2 snapshots: gpu0001.tar, gpu0001.tar.gz; judged from none (remove all but the current one)'), 'listed among the nodes not judged');
  t.equal(text.at(-2), 'result: 0 of 3 nodes differ from their class; 1 not fully judged (1 unreadable, 0 missing, 0 judged in part) (exit 1)');
});

t.test('two snapshots of a node that also has a spool: its bandwidth judged, its facts not, exit 1', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 3, seed: 7, rates: CLEAN });
  copyFileSync(path.join(dir, 'gpu0002.tar.gz'), path.join(dir, 'gpu0002.tgz'));
  const r = (await runFleetReport({ dir, baseline: null })).report;
  const v = r.nodes.find((x) => x.node === 'gpu0002');
  t.equal(v?.status, 'incomplete');
  t.same(v?.notes, ['2 snapshots: gpu0002.tar.gz, gpu0002.tgz; judged from none (remove all but the current one)']);
  t.equal(r.exitCode, 1);
});

t.test('nothing judged: an empty directory, every name refused, an unreachable Prometheus: said, exit 1', async (t) => {
  const root = t.testdir();
  const empty = path.join(root, 'empty');
  mkdirSync(empty);
  const r = (await runFleetReport({ dir: empty, baseline: null })).report;
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
  t.equal(r.summary.nodes, 0);
  t.equal(r.exitCode, 1);
  t.equal(renderFleetText(r).split('\n').at(-2), `result: nothing judged: no node found in ${empty} (see the notes above) (exit 1)`);
  t.ok(renderFleetHtml(r).includes('<p class="bad">nothing judged: no node found: '), 'the HTML says so too');
  t.notOk(renderFleetHtml(r).includes('every node judged'));

  // Real snapshots under names the scanner refuses.
  const bad = path.join(root, 'badnames');
  await generateFleet(bad, { n: 2, seed: 7, rates: CLEAN, spools: false });
  renameSync(path.join(bad, 'gpu0001.tar.gz'), path.join(bad, 'gpu[1-2].tar.gz'));
  renameSync(path.join(bad, 'gpu0002.tar.gz'), path.join(bad, '-gpu2.tar.gz'));
  for (const f of readdirSync(bad)) if (f.endsWith('.summary.json') || f === 'gdrgate-collect.json') rmSync(path.join(bad, f));
  const b = (await runFleetReport({ dir: bad, baseline: null })).report;
  t.equal(b.summary.nodes, 0);
  t.equal(b.problems.length, 3, JSON.stringify(b.problems));
  t.equal(b.exitCode, 1);

  // Prometheus on a port nothing listens on, no file in the directory: the CLI says so and exits 1.
  const p = (await runFleetReport({ dir: empty, baseline: null, sources: statsSources({ prometheus: 'http://127.0.0.1:1/' }) })).report;
  t.equal(p.exitCode, 1);
  const c = cli(['fleet', 'report', empty, '--prometheus', 'http://127.0.0.1:1/']);
  t.equal(c.code, 1, c.stderr);
  t.equal(c.stdout.trimEnd().split('\n').at(-1), `result: nothing judged: no node found in ${empty} (see the notes above) (exit 1)`);
  const j = cli(['fleet', 'report', empty, '--json']);
  t.equal(j.code, 1);
  t.equal(JSON.parse(j.stdout).exitCode, 1);
});
