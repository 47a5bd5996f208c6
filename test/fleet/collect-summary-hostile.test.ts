// A gdrgate-collect.json that is not the one fleet collect wrote (a symbolic link, dangling or to another fleet's
// summary; a file of millions of entries) is said as a problem of the report (exit 1), never silently taken or
// dropped, and never ends the report.
import t from 'tap';
import { symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runFleetReport } from '../../src/fleet/report-command.js';
import { generateFleet } from '../gen/fleet.js';
import { validate } from '../helpers/schema.js';

const CLEAN = { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 };

t.test('a collect summary that is a symbolic link: not read, dangling or not; said, exit 1', async (t) => {
  const root = t.testdir();
  const other = path.join(root, 'other-fleet.json');
  writeFileSync(other, JSON.stringify({ missing: [{ node: 'gpu0099', why: 'srun: node not responding' }] }));
  for (const [what, target] of [['dangling', path.join(root, 'gone.json')], ["another fleet's summary", other]] as const) {
    const dir = path.join(root, what.replace(/\W+/g, '-'));
    await generateFleet(dir, { n: 3, seed: 5, rates: CLEAN, spools: false });
    const file = path.join(dir, 'gdrgate-collect.json');
    symlinkSync(target, file);
    const r = (await runFleetReport({ dir, baseline: null })).report;
    t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), [], what);
    t.strictSame(r.problems, [`${file}: the fleet collect summary is a symbolic link: not read (a link could name any file, another fleet's summary), ignored`], what);
    t.strictSame(r.nodes.map((v) => [v.node, v.status]), [['gpu0001', 'ok'], ['gpu0002', 'ok'], ['gpu0003', 'ok']], `${what}: no node taken from it`);
    t.equal(r.exitCode, 1, what);
  }
});

t.test('a collect summary of seven million entries without a node name: the report ends, says how many, exit 1', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 3, seed: 5, rates: CLEAN, spools: false });
  const file = path.join(dir, 'gdrgate-collect.json');
  writeFileSync(file, `{"missing":[${Array<string>(7_000_000).fill('1').join(',')}],"answered":[{"node":"bad name"},{"node":"gpu0002"}]}`);
  const r = (await runFleetReport({ dir, baseline: null })).report;
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
  t.strictSame(r.problems.length, 21);
  t.strictSame(r.problems[0], `${file}: a "missing" entry without a node name, skipped`);
  t.strictSame(r.problems[20], `${file}: 6999981 more entries not taken (not said one by one)`);
  t.strictSame(r.nodes.map((v) => [v.node, v.status]), [['gpu0001', 'ok'], ['gpu0002', 'ok'], ['gpu0003', 'ok']]);
  t.equal(r.exitCode, 1);
});
