// One bandwidth unit table for every figure: perftest's MB/sec is 2^20 bytes a second (print_report_bw's format_factor
// 0x100000; Gb/sec 125000000 bytes), nvbandwidth's GB/s 10^9. The Epilog's textfile, the fleet's figures from a spool
// and the 10 TB/s bound read it alike: the fleet read MB/s as 10^6 while the textfile said 2^20, 4.9 % apart.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { renderProm } from '../../src/epilog/prom.js';
import { spoolStatsInTurns } from '../../src/fleet/spool-stats.js';
import { parseIbWriteBw } from '../../src/parsers/ib-write-bw.js';
import { BYTES_PER_SECOND, bandwidthProblem, makeSample, sampleLine } from '../../src/samples/sample.js';
import { StatsAccumulator } from '../../src/samples/stats.js';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

t.test('the units: perftest MB/sec 2^20 B/s, Gb/sec 10^9 bit/s, nvbandwidth GB/s 10^9 B/s', async (t) => {
  t.same(BYTES_PER_SECOND, { 'Gb/s': 125_000_000, 'MB/s': 1_048_576, 'GB/s': 1_000_000_000 });
  // The bound in each unit: 10 TB/s.
  t.same([bandwidthProblem(9_536_743, 'MB/s'), bandwidthProblem(9_536_744, 'MB/s')], [null, '9536744 MB/s is above 10 TB/s, more than a PCIe or NVLink path carries']);
});

t.test("a real MB/sec run (soft-RoCE, 110.28 MB/sec): the textfile's figure and the fleet's are the same bytes a second", async (t) => {
  const r = parseIbWriteBw(readFileSync(path.join(REPO, 'test/fixtures/ib_write_bw/softroce_rxe0_host_ib_write_bw_110MBps_excerpt.txt'), 'utf8'));
  t.equal(r.unit, 'MB/s');
  const avg = r.rows.at(-1)!.bwAverage;
  t.equal(avg, 110.28);
  const recipe = { tool: 'ib_write_bw', args: ['-d', 'rxe0'], msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: null, direction: 'host->nic->host' };
  const sample = makeSample({ ts: Date.now() - 60_000, node: 'gpu001', job: '1', probe: 'ib-write-host', recipe, gpu: null, nic: 'rxe0', bytes: 65536, value: avg, unit: 'MB/s' });
  const acc = new StatsAccumulator();
  acc.add(sample);
  const prom = renderProm({ node: 'gpu001', stats: acc.result({ lastN: 5 }), window: 5, spool: { torn: 0, corrupt: 0 }, now: Date.now() });
  const line = prom.split('\n').find((l) => l.startsWith('gdrgate_bandwidth_bytes_per_second{') && l.includes('window="all"') && l.includes('stat="p50"'));
  const textfile = Number(line?.split(' ').at(-1));
  const dir = scratchDir('gdrgate-units-');
  const spool = path.join(dir, 'gpu001.samples.jsonl');
  writeFileSync(spool, `${sampleLine(sample)!}\n`);
  const fleet = (await spoolStatsInTurns(new Map([['gpu001', [spool]]]))).stats;
  t.same([textfile, fleet.map((s) => s.p50)], [110.28 * 1_048_576, [110.28 * 1_048_576]]);
});
