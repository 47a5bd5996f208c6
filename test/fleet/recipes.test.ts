// Two recipes of one probe in a class (a rollout): a node is "absent" (no figure on a rail) only when it has no
// figure on that rail under any recipe, so the fleet is not all critical; and judging grows linearly with many recipes.
import t from 'tap';
import { distributions } from '../../src/fleet/bandwidth.js';
import { buildFleetReport } from '../../src/fleet/report.js';
import type { NodePathStat } from '../../src/fleet/types.js';
import { countVisits, nLogNBound } from '../helpers/ops.js';
import { validate } from '../helpers/schema.js';

const name = (i: number): string => `gpu${String(i + 1).padStart(5, '0')}`;

/**
 * `n` nodes, 8 rails each; node i runs recipe `recipeOf(i)`, whose hash differs per rail as a real recipe's does (its
 * arguments name the device): `<recipe>-<rail>`. Node `drop` has no figure on rail 3.
 */
function fleet(n: number, recipeOf: (i: number) => string, drop = -1): NodePathStat[] {
  const stats: NodePathStat[] = [];
  for (let i = 0; i < n; i++)
    for (let g = 0; g < 8; g++) {
      if (i === drop && g === 3) continue;
      const p50 = 4.9e10 + ((i * 7 + g * 3) % 11) * 1e7;
      stats.push({ node: name(i), probe: 'ib-write-gpu', recipeHash: `${recipeOf(i)}-${g}`, gpu: `0000:${(0x18 + g * 0x10).toString(16)}:00.0`, nic: `mlx5_${g}`, direction: 'gpu->nic', p50, min: p50 * 0.98, count: 5, source: 'prometheus:x' });
    }
  return stats;
}

const judge = (stats: readonly NodePathStat[]) => buildFleetReport({ dir: 'x', nodes: [], classOf: () => 'fleet', stats, missing: [], problems: [] });

t.test('nodes 5-8 rerun with another recipe: no node is absent on the other recipe\'s rails, none flagged', async (t) => {
  const r = judge(fleet(8, (i) => (i < 4 ? 'r1m' : 'r2m')));
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
  t.equal(r.summary.flagged, 0);
  t.equal(r.summary.absentRails, 0);
  t.equal(r.exitCode, 0);
  const paths = r.classes[0]!.paths;
  t.equal(paths.length, 16, '8 rails × 2 recipes, never pooled');
  t.same(paths.map((p) => p.absent.length), Array(16).fill(0));
  t.same(paths.map((p) => p.points.length), Array(16).fill(4));
});

t.test("a node that lost a rail is still absent there, once, on the rail's path measured by the most nodes", async (t) => {
  const r = judge(fleet(8, (i) => (i < 4 ? 'r1m' : 'r2m'), 1));
  t.same(r.nodes.filter((v) => v.status !== 'ok').map((v) => [v.node, v.worst, v.rails.map((x) => `${x.kind} ${x.rail} ${x.recipeHash}`)]), [['gpu00002', 'critical', ['absent 0000:48:00.0↔mlx5_3 r2m-3']]]);
  t.same(r.classes[0]!.paths.filter((p) => p.absent.length).map((p) => [p.rail, p.recipeHash, p.absent]), [['0000:48:00.0↔mlx5_3', 'r2m-3', ['gpu00002']]]);
});

t.test('a rail most nodes of a recipe do not measure is no one\'s absence', async (t) => {
  // 4 nodes measure rails 0-7; 6 more of the same recipe measure only rail 0-2 (a probe config that differs).
  const stats = fleet(4, () => 'r').concat(fleet(10, () => 'r').filter((s) => s.node >= name(4) && Number(s.nic!.slice(5)) < 3));
  const d = distributions(stats, Array.from({ length: 10 }, (_, i) => name(i)));
  t.same(d.map((p) => [p.nic, p.points.length, p.absent.length]), [0, 1, 2, 3, 4, 5, 6, 7].map((g) => [`mlx5_${g}`, g < 3 ? 10 : 4, 0]));
});

t.test('one recipe per 3 nodes: the work grows no faster than N log N (it was quadratic: every node absent on every other recipe)', async (t) => {
  const visits = async (n: number): Promise<number> => {
    const r = await countVisits(() => judge(fleet(n, (i) => `r${Math.floor(i / 3)}`)));
    t.equal(r.value.summary.nodes, n);
    t.equal(r.value.summary.absentRails, 0);
    return r.visits;
  };
  const n = 600;
  const [a, b] = [await visits(n), await visits(4 * n)];
  t.ok(b / a <= nLogNBound(n), `4x the nodes: ${(b / a).toFixed(2)}x the work (N log N allows ${nLogNBound(n).toFixed(2)}x)`);
});
