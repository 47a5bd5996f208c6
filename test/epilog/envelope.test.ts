// The bands `baseline capture --with-probes` draws from its runs (src/epilog/envelope.ts envelopesFrom): one per probe,
// path, recipe and unit, the p50 a measured run's, warn and fail as fractions of it, fail never above warn.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { envelopesFrom } from '../../src/epilog/envelope.js';
import { parseIbWriteBw } from '../../src/parsers/ib-write-bw.js';
import { makeSample, type BandwidthUnit, type ProbeRecipe } from '../../src/samples/sample.js';
import { fixture } from '../helpers/paths.js';

// The real runs' averages: 92.56 Gb/sec (SR-IOV RoCE, host memory) and 110.28 MB/sec (soft-RoCE, no --report_gbits).
const avg = (f: string): number => parseIbWriteBw(readFileSync(fixture('ib_write_bw', f), 'utf8')).rows.at(-1)!.bwAverage;
const GBPS = avg('sriov_roce_host_client_92gbps.txt');
const MBPS = avg('softroce_rxe0_host_ib_write_bw_110MBps_excerpt.txt');
const recipe: ProbeRecipe = {
  tool: 'ib_write_bw', args: ['-d', 'mlx5_0', '-s', '65536', '-n', '5000', '-F', '127.0.0.1'], msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: null, direction: 'host->nic->host',
};
const run = (value: number, unit: BandwidthUnit, i: number) =>
  makeSample({ ts: 1_800_000_000_000 + i, node: 'gpu001', job: null, probe: 'ib-write-host', recipe, gpu: null, nic: 'mlx5_0', bytes: 65536, value, unit });
const RATIOS = { warnRatio: 0.85, failRatio: 0.7 };
const band = { probe: 'ib-write-host', gpu: null, nic: 'mlx5_0', direction: 'host->nic->host', recipe };

t.test('the real figures: 92.56 Gb/sec and 110.28 MB/sec', async (t) => {
  t.same([GBPS, MBPS], [92.56, 110.28]);
});

t.test('four runs: the p50 is the nearest-rank one (the second lowest), a value that was measured', async (t) => {
  const runs = [GBPS, 92.26, 92.76, 92.46].map((v, i) => run(v, 'Gb/s', i));
  t.same(envelopesFrom(runs, RATIOS), [{ ...band, unit: 'Gb/s', p50: 92.46, samples: 4, warnBelow: 78.59, failBelow: 64.72 }]);
});

t.test('runs in two units are two bands, never one band of mixed figures', async (t) => {
  const runs = [run(GBPS, 'Gb/s', 0), run(MBPS, 'MB/s', 1), run(GBPS, 'Gb/s', 2)];
  t.same(envelopesFrom(runs, RATIOS), [
    { ...band, unit: 'Gb/s', p50: 92.56, samples: 2, warnBelow: 78.68, failBelow: 64.79 },
    { ...band, unit: 'MB/s', p50: 110.28, samples: 1, warnBelow: 93.74, failBelow: 77.2 },
  ]);
});

t.test('a fail ratio above the warn ratio: fail at the warn bound, never above it (a band the judge could use)', async (t) => {
  t.same(envelopesFrom([run(GBPS, 'Gb/s', 0)], { warnRatio: 0.8, failRatio: 0.9 }), [{ ...band, unit: 'Gb/s', p50: 92.56, samples: 1, warnBelow: 74.05, failBelow: 74.05 }]);
});
