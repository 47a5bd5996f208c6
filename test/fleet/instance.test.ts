// A Prometheus series counts for the node its label names only when the instance it was scraped from is that node
// (or cannot be checked: an IP address, no instance): a cloned textfile or another exporter never speaks for a node.
import t from 'tap';
import { buildFleetReport } from '../../src/fleet/report.js';
import { foreignInstance, statsFromSeries, type Series } from '../../src/fleet/series.js';
import { validate } from '../helpers/schema.js';
import { hostNamer, hostTwins, isNodeHost } from '../../src/fleet/host-name.js';
import { notThisNode } from '../../src/fleet/read-one.js';

/** The epilog's p50 and samples series of one rail of `node`, scraped from `instance`. */
function series(node: string, instance: string | null, rail = 0): Series[] {
  const labels = (extra: Record<string, string>): Map<string, string> =>
    new Map(Object.entries({ node, probe: 'ib-write-gpu', gpu: `0000:${18 + rail}:00.0`, nic: `mlx5_${rail}`, direction: 'gpu->nic', recipe: `r${rail}`, window: 'all', ...(instance === null ? {} : { instance }), ...extra }));
  return [
    { name: 'gdrgate_bandwidth_bytes_per_second', labels: labels({ stat: 'p50' }), value: 4.9e10, source: 'prometheus:http://p/' },
    { name: 'gdrgate_bandwidth_samples', labels: labels({}), value: 5, source: 'prometheus:http://p/' },
  ];
}

t.test('which instances can speak for a node', async (t) => {
  const one = (inst: string | null, node = 'gpu0002'): string | null => foreignInstance(series(node, inst)[0]!, node);
  t.same(
    ['gpu0002:9100', 'GPU0002.cluster.example:9100', 'gpu0002', '10.1.2.3:9100', '[fd00::2]:9100', null, 'gpu0001:9100', 'gpu00021:9100', 'login.gpu0002:9100'].map((i) => one(i)),
    [null, null, null, null, null, null, 'gpu0001:9100', 'gpu00021:9100', 'login.gpu0002:9100'],
  );
});

t.test('a node named by its full name (a Slurm NodeName with dots): its own host and exporter are its', async (t) => {
  t.same(['n01.a.b:9100', 'N01.A.B.example:9100', 'n01:9100', 'n01.a.c:9100'].map((i) => foreignInstance(series('n01.a.b', i)[0]!, 'n01.a.b')), [null, null, 'n01:9100', 'n01.a.c:9100']);
  t.same([isNodeHost('n01.a.b', 'n01.a.b'), isNodeHost('n01.a.b.example', 'n01.a.b'), isNodeHost('n01', 'n01.a.b'), isNodeHost('gpu017.cluster', 'gpu017'), isNodeHost('gpu0170', 'gpu017')], [true, true, false, true, false]);
  t.equal(notThisNode('n01.a.b', 'n01.a.b', null), null, 'before: "taken on \"n01.a.b\", not on n01.a.b"');
  t.equal(notThisNode('n01.a.b', 'n02.a.b', null), 'the snapshot was taken on "n02.a.b", not on n01.a.b: not judged as n01.a.b');
});

t.test("gpu0001's exporter serves series labelled gpu0002 (a cloned textfile): not counted for gpu0002, said", async (t) => {
  const f = statsFromSeries([...series('gpu0001', 'gpu0001:9100'), ...series('gpu0002', 'gpu0001:9100'), ...series('gpu0003', 'gpu0003:9100'), ...series('gpu0002', 'gpu0002.example:9100', 1)]);
  t.same(f.stats.map((s) => [s.node, s.nic]), [['gpu0001', 'mlx5_0'], ['gpu0002', 'mlx5_1'], ['gpu0003', 'mlx5_0']]);
  t.same(f.missing, [{ node: 'gpu0002', why: 'series labelled node="gpu0002" from instance gpu0001:9100, not this node\'s exporter: not counted' }]);
  const r = buildFleetReport({ dir: 'x', nodes: [], classOf: () => 'fleet', stats: f.stats, missing: [], broken: f.missing, problems: [] });
  t.same(validate('fleet-report', JSON.parse(JSON.stringify(r))), []);
  t.equal(r.nodes.find((v) => v.node === 'gpu0002')?.status, 'incomplete');
  t.equal(r.exitCode, 1);
  // The opt-out for relabelled setups (instance names a proxy): every series taken as labelled.
  t.same(statsFromSeries(series('gpu0002', 'gpu0001:9100'), 'all', false).missing, []);
});

t.test('which names are one host: the same but for case, or a short name beside its full ones; linear in the names', async (t) => {
  t.same(hostTwins(['n01', 'N01.a', 'n01.a.b', 'n01.c', 'n02', 'n010', 'n02x.n02', 'm1.a', 'm1.b']), [['N01.a', 'n01', 'n01.a.b', 'n01.c']]);
  t.same(hostTwins(['gpu1.x.y', 'gpu1.x', 'GPU2', 'gpu2']), [['gpu1.x', 'gpu1.x.y'], ['GPU2', 'gpu2']]);
  const many = Array.from({ length: 100_000 }, (_, i) => `x.${i}`);
  t.same(hostTwins(many), [], 'full names that share a first label and have no short one are apart');
  t.same(hostTwins([...many, 'x']).map((g) => g.length), [100_001]);
  const named = hostNamer(['gpu0001', 'gpu0002.cluster.example', 'n01', 'N01']);
  t.same(['GPU0001', 'gpu0001.cluster.example', 'gpu0002', 'gpu0002.cluster', 'gpu0002.cluster.example.org', 'gpu0002.other', 'n01.a', 'gpu0003'].map(named), ['gpu0001', 'gpu0001', 'gpu0002.cluster.example', 'gpu0002.cluster.example', 'gpu0002.cluster.example', 'gpu0002.other', 'n01.a', 'gpu0003']);
});

t.test('a short label is checked against the node it is filed under: n01 from n01.c.d is not n01.a.b\'s', async (t) => {
  const named = hostNamer(['n01.a.b', 'gpu0004']);
  const f = statsFromSeries([...series('n01', 'n01.c.d:9100'), ...series('n01', 'n01.a.b.example:9100', 1), ...series('gpu0004.cluster.example', 'gpu0004.cluster.example:9100')], 'all', true, undefined, named);
  t.same(f.stats.map((s) => [s.node, s.nic]), [['gpu0004.cluster.example', 'mlx5_0'], ['n01', 'mlx5_1']], 'filed under their labels; report-command folds them');
  t.same(f.missing, [{ node: 'n01', why: 'series labelled node="n01" from instance n01.c.d:9100, not this node\'s exporter: not counted' }], 'before: counted, then filed under n01.a.b');
});
