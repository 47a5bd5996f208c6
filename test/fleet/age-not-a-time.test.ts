// A last-sample time from Prometheus that is not a time (NaN, +Inf, -Inf): the path's age cannot be told, so it is
// not judged and its node says so (incomplete), as for a time ahead of the clock; it never passes as fresh. And the
// bounds of ageProblem: max-age, and the clock tolerance ahead of this host's clock.
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

t.test('ageProblem at its bounds: max-age old still judged, ahead of the clock within its 60 s tolerance judged', async (t) => {
  const { now, maxAgeMs } = AGE;
  t.same([ageProblem(now - maxAgeMs, AGE), ageProblem(now - maxAgeMs - 1, AGE)], [null, `${new Date(now - maxAgeMs - 1).toISOString()}, older than 7d`]);
  // Another host's clock a few seconds ahead (NTP slews stay far below a minute): judged, as samples.ts's clock tolerance.
  t.same([ageProblem(now + 5_000, AGE), ageProblem(now + 60_000, AGE), ageProblem(now + 60_001, AGE)], [null, null, `${new Date(now + 60_001).toISOString()}, more than 60 s ahead of this host's clock (its age cannot be told)`]);
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
