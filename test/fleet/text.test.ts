// The text report: the bandwidth table's columns line up whatever the lengths of probes, rails and directions,
// every finding is followed by what to do about it, and a report of hundreds of thousands of lines is still written.
import t from 'tap';
import { parsePromText } from '../../src/fleet/prom-text.js';
import { buildFleetReport } from '../../src/fleet/report.js';
import { statsFromSeries } from '../../src/fleet/series.js';
import type { NodePathStat } from '../../src/fleet/types.js';
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
  t.equal(lines[i], 'gpu004  MAJOR       bw ib-write-gpu 0000:82:00.0↔mlx5_1 gpu->nic->gpu: 10.5 Gb/s  (class median 23.0 Gb/s, band from 21.4 Gb/s, z -27.2)');
  t.equal(lines[i + 1], '                      what to do: rerun the probe on this node; if it stays below the band, check the rail (gdrgate check --only pcie-link,pcie-acs on the node) and its cable');
});

t.test('150,000 nodes not judged and one node naming 150,000 paths (a hostile collect summary, spool): every line written', async (t) => {
  const n = 150_000;
  const stat = (node: string, k: number): NodePathStat => ({ node, probe: 'ib-write-gpu', recipeHash: '0bb1817a553a', gpu: `${(k >> 5).toString(16).padStart(4, '0')}:${(k & 31).toString(16).padStart(2, '0')}:00.0`, nic: 'mlx5_0', direction: 'gpu->nic', p50: 49e9, min: 48e9, count: 5, source: 'spool:x' });
  const many = Array.from({ length: n }, (_, k) => stat('gpu0', k));
  const missing = Array.from({ length: n }, (_, k) => ({ node: `n${k + 1}`, why: 'fleet collect: srun: node not responding' }));
  const r = buildFleetReport({ dir: 'f', nodes: [], classOf: () => 'fleet', stats: many, missing, problems: [] });
  const text = renderFleetText(r).split('\n');
  t.equal(text.filter((l) => l.startsWith('    ib-write-gpu  ')).length, n, 'a row per path');
  const at = text.indexOf(`not judged: could not be read or did not answer (${n}):`);
  t.strictSame(text.slice(at + 1, at + 1 + n), missing.map((m) => `  ${m.node}: ${m.why}`), 'a line per node not judged');
  t.equal(text.find((l) => l.startsWith('gpu0 ')), 'gpu0     INCOMPLETE  not judged: ib-write-gpu 0000:00:00.0↔mlx5_0 gpu->nic and 149999 more path(s): measured by fewer than 3 nodes of the class, no band: not judged');
  t.equal(text.at(-2), `result: 0 of ${n + 1} nodes differ from their class; ${n + 1} not fully judged (0 unreadable, ${n} missing, 1 judged in part) (exit 1)`);
});
