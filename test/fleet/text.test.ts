// The text report: the bandwidth table's columns line up whatever the lengths of probes, rails and directions,
// and every finding is followed by what to do about it.
import t from 'tap';
import { parsePromText } from '../../src/fleet/prom-text.js';
import { buildFleetReport } from '../../src/fleet/report.js';
import { statsFromSeries } from '../../src/fleet/series.js';
import { gbps, renderFleetText } from '../../src/fleet/text.js';
import { nodeTextfile } from './_prom-fleet.js';

const nodes = ['gpu001', 'gpu002', 'gpu003', 'gpu004', 'gpu005'];
const series = nodes.flatMap((n, i) => parsePromText(nodeTextfile(n, n === 'gpu004', 40 + i).text, `textfile:${n}.prom`));
const { stats } = statsFromSeries(series);
const report = buildFleetReport({ dir: 'f', nodes: [], classOf: () => 'fleet', stats, missing: [], problems: [] });
const lines = renderFleetText(report).split('\n');

t.test('the bandwidth table: each column starts where its header does, on every row', async (t) => {
  const h = lines.findIndex((l) => /^\s+PROBE\s+RAIL\s+DIRECTION\s+NODES\s+MEDIAN\s+MAD\s+BAND FROM\s+BELOW$/.test(l));
  t.ok(h > 0, 'a header row');
  const head = lines[h]!;
  const paths = report.classes[0]!.paths;
  t.equal(paths.length, 3);
  paths.forEach((p, k) => {
    const row = lines[h + 1 + k]!;
    const at = (col: string, cell: string): void => void t.equal(row.indexOf(cell, head.indexOf(col)), head.indexOf(col), `${p.rail} ${p.direction}: ${col} column`);
    at('PROBE', p.probe);
    at('RAIL', p.rail);
    at('DIRECTION', p.direction);
    at('NODES', String(p.band!.n));
    at('MEDIAN', gbps(p.band!.median));
    at('MAD', gbps(p.band!.mad));
    at('BAND FROM', gbps(p.band!.low));
  });
});

t.test('every finding is followed by what to do', async (t) => {
  const i = lines.findIndex((l) => /^gpu002 /.test(l) || /^gpu004 /.test(l));
  t.match(lines[i] ?? '', /^gpu004 +MAJOR +bw ib-write-gpu 0000:82:00\.0↔mlx5_1 gpu->nic->gpu: /);
  t.match(lines[i + 1] ?? '', /^ +what to do: rerun the probe on this node; if it stays below the band, check the rail/);
});
