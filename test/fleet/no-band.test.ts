// A path fewer than 3 nodes of a class measured has no band: its nodes are not judged there, each says so
// (incomplete, exit 1), as for a fact two nodes tie on; two nodes at 100 and 393 Gb/s never "all agree".
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runFleetReport } from '../../src/fleet/report-command.js';
import { recipeHash, type ProbeRecipe } from '../../src/samples/sample.js';
import { generateFleet } from '../gen/fleet.js';

const CLEAN = { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 };
const NOTE = 'ib-write-gpu 0000:18:00.0↔mlx5_0 gpu->nic and 7 more path(s): measured by fewer than 3 nodes of the class, no band: not judged';

t.test('two nodes, one at a quarter of the other: both incomplete on their rails, exit 1', async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 2, seed: 11, rates: CLEAN });
  const spool = path.join(dir, 'gpu0002.samples.jsonl');
  writeFileSync(spool, readFileSync(spool, 'utf8').replace(/"value":[0-9.]+/g, '"value":100.5'));
  const r = (await runFleetReport({ dir, baseline: null })).report;
  t.strictSame(r.classes[0]!.paths.map((p) => p.band), Array(8).fill(null));
  t.strictSame(r.nodes.map((v) => [v.node, v.status, v.rails.length, v.notes]), [['gpu0001', 'incomplete', 0, [NOTE]], ['gpu0002', 'incomplete', 0, [NOTE]]]);
  t.equal(r.exitCode, 1);
});

t.test("three nodes, one measuring a rail with another message size: that rail's two paths have no band, none judged there", async (t) => {
  const dir = path.join(t.testdir(), 'fleet');
  await generateFleet(dir, { n: 3, seed: 11, rates: CLEAN });
  // gpu0001 measured its mlx5_0 rail with another message size: a path of one node.
  const spool = path.join(dir, 'gpu0001.samples.jsonl');
  const other = (l: string): string => {
    const x = JSON.parse(l) as { recipe: ProbeRecipe; recipeHash: string };
    x.recipe = { ...x.recipe, msgSize: 65536, args: x.recipe.args.map((a) => (a === '1048576' ? '65536' : a)) };
    x.recipeHash = recipeHash(x.recipe);
    return JSON.stringify(x);
  };
  writeFileSync(spool, readFileSync(spool, 'utf8').split('\n').map((l) => (l.includes('"mlx5_0"') ? other(l) : l)).join('\n'));
  const r = (await runFleetReport({ dir, baseline: null })).report;
  const one = r.classes[0]!.paths.filter((p) => p.band === null).map((p) => [p.rail, p.points.map((x) => x.node)]);
  t.strictSame(one, [['0000:18:00.0↔mlx5_0', ['gpu0002', 'gpu0003']], ['0000:18:00.0↔mlx5_0', ['gpu0001']]]);
  t.strictSame(r.nodes.map((v) => [v.node, v.status, v.notes.length]), [['gpu0001', 'incomplete', 1], ['gpu0002', 'incomplete', 1], ['gpu0003', 'incomplete', 1]]);
  t.equal(r.nodes[0]!.notes[0], 'ib-write-gpu 0000:18:00.0↔mlx5_0 gpu->nic: measured by fewer than 3 nodes of the class, no band: not judged');
  t.equal(r.exitCode, 1);
});
