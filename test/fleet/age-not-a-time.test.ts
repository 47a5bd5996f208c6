// A last-sample time from Prometheus that is not a time (NaN, +Inf, -Inf): the path's age cannot be told, so it is
// not judged and its node says so (incomplete), as for a time ahead of the clock; it never passes as fresh.
import t from 'tap';
import { ageProblem, DEFAULT_MAX_AGE_MS } from '../../src/fleet/age.js';
import { parsePromText } from '../../src/fleet/prom-text.js';
import { statsFromSeries, TS_METRIC } from '../../src/fleet/series.js';
import { GEN_TIME } from '../gen/fleet.js';
import { nodeTextfile } from './_prom-fleet.js';

const AGE = { now: GEN_TIME + 600_000, maxAgeMs: DEFAULT_MAX_AGE_MS };

t.test('ageProblem: a value that is not a time is never judged', async (t) => {
  t.equal(ageProblem(Number.NaN, AGE), 'NaN, not a time (its age cannot be told)');
  t.equal(ageProblem(Number.POSITIVE_INFINITY, AGE), 'Infinity, not a time (its age cannot be told)');
  t.equal(ageProblem(Number.NEGATIVE_INFINITY, AGE), '-Infinity, not a time (its age cannot be told)');
  t.equal(ageProblem(GEN_TIME, AGE), null, 'a real time within max-age is judged');
});

for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
  t.test(`gpu0003's ${TS_METRIC} is ${bad} on its mlx5_1 rail: that path not judged, the node says why`, async (t) => {
    const series = ['gpu0001', 'gpu0002', 'gpu0003'].flatMap((node, i) => parsePromText(nodeTextfile(node, false, 21 + i).text, `textfile:${node}.prom`))
      .map((s) => (s.name === TS_METRIC && s.labels.get('node') === 'gpu0003' && s.labels.get('nic') === 'mlx5_1' ? { ...s, value: bad } : s));
    const r = statsFromSeries(series, 'all', true, AGE);
    t.strictSame(r.missing, [{ node: 'gpu0003', why: `ib-write-gpu 0000:82:00.0→mlx5_1 gpu->nic->gpu: newest figure ${bad}, not a time (its age cannot be told), not judged` }]);
    t.strictSame(r.withheld, [{ node: 'gpu0003', probe: 'ib-write-gpu', gpu: '0000:82:00.0', nic: 'mlx5_1', direction: 'gpu->nic->gpu' }]);
    const paths = (node: string): string[] => r.stats.filter((s) => s.node === node).map((s) => `${s.probe} ${s.nic}`).sort();
    t.strictSame(paths('gpu0001'), ['ib-write-gpu mlx5_0', 'ib-write-gpu mlx5_1', 'ib-write-host mlx5_0']);
    t.strictSame(paths('gpu0003'), ['ib-write-gpu mlx5_0', 'ib-write-host mlx5_0'], 'the undated path is left out');
  });
}
