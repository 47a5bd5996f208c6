// How the fleet report's work grows with its input, counted (array elements visited), not timed: a Prometheus
// answer's series and a node's spool files at n and 4n may cost at most what N log N allows, never N².
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseQueryAnswer } from '../../src/fleet/prom-answer.js';
import { scanFleetDir } from '../../src/fleet/inputs.js';
import { statsFromSeries } from '../../src/fleet/series.js';
import { spoolStatsInTurns } from '../../src/fleet/spool-stats.js';
import { countVisits, nLogNBound } from '../helpers/ops.js';

/** An instant-query answer of `paths` paths of one node (a hostile or a huge exporter), p50 and count each. */
function answer(paths: number): string {
  const result: unknown[] = [];
  for (let i = 0; i < paths; i++) {
    const labels = { node: 'gpu0001', probe: `p${i}`, gpu: '0000:18:00.0', nic: 'mlx5_0', direction: 'gpu->nic', recipe: 'r1', window: 'all', instance: 'x:9100', job: 'node' };
    result.push({ metric: { __name__: 'gdrgate_bandwidth_bytes_per_second', stat: 'p50', ...labels }, value: [1_800_000_000, '4.9e10'] });
    result.push({ metric: { __name__: 'gdrgate_bandwidth_samples', ...labels }, value: [1_800_000_000, '5'] });
  }
  return JSON.stringify({ status: 'success', data: { resultType: 'vector', result } });
}

t.test('a Prometheus answer: parsing and grouping its series grow no faster than N log N', async (t) => {
  const n = 4000;
  const [small, big] = [answer(n), answer(4 * n)];
  const a = await countVisits(() => statsFromSeries(parseQueryAnswer(small, 'prometheus:x')));
  const b = await countVisits(() => statsFromSeries(parseQueryAnswer(big, 'prometheus:x')));
  t.equal(a.value.stats.length, n);
  t.equal(b.value.stats.length, 4 * n);
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
      return { inputs, stats: await spoolStatsInTurns(inputs.spools, 1e9) };
    });
    t.equal(r.value.inputs.spools.get('gpu0001')?.length, files, `${files} files listed`);
    return r.visits;
  };
  const n = 1500;
  const [a, b] = [await visits(n), await visits(4 * n)];
  t.ok(b / a <= nLogNBound(n), `4x the files: ${(b / a).toFixed(2)}x the work (N log N allows ${nLogNBound(n).toFixed(2)}x)`);
});
