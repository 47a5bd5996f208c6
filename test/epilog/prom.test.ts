// The Prometheus textfile: base units, labels escaped, checked by the real `promtool check metrics` (Debian package
// `prometheus`): skipped when promtool is absent outside CI, a failure when CI is set.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';

import path from 'node:path';
import { writeAtomic } from '../../src/host/files.js';
import { BYTES_PER_SECOND, renderProm } from '../../src/epilog/prom.js';
import { makeSample, type BandwidthUnit, type ProbeRecipe } from '../../src/samples/sample.js';
import { StatsAccumulator } from '../../src/samples/stats.js';
import { scratchDir } from '../helpers/scratch.js';

const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find(existsSync);
const r = (direction: string, args: string[]): ProbeRecipe => ({ tool: 'ib_write_bw', args, msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: 0, direction });

const SERIES = (node: string, probe: string, gpu: string, nic: string, direction: string, recipe: string) => `{node="${node}",probe="${probe}",gpu="${gpu}",nic="${nic}",direction="${direction}",recipe="${recipe}"`;

function text(node = 'gpu001'): string {
  const acc = new StatsAccumulator();
  const add = (probe: string, gpu: string | null, nic: string | null, recipe: ProbeRecipe, unit: BandwidthUnit, vs: number[]) =>
    vs.forEach((value, i) => acc.add(makeSample({ ts: 1_800_000_000_000 + i, node, job: String(i), probe, recipe, gpu, nic, bytes: 65536, value, unit })));
  add('ib-write-host', null, 'mlx5_0', r('host->nic->host', ['-d', 'mlx5_0']), 'Gb/s', [92.56, 92.4, 92.5]);
  add('ib-write-gpu', '0000:41:00.0', 'mlx5_0', r('gpu->nic->gpu', ['-d', 'mlx5_0', '--use_cuda=0']), 'Gb/s', [23.03, 10.5, 10.5, 10.5, 10.5, 10.5, 23]);
  add('ib-write-host', null, 'rxe0', r('host->nic->host', ['-d', 'rxe0']), 'MB/s', [110.28]);
  add('nvbw-h2d', '0000:41:00.0', null, { ...r('h2d', ['-t', 'host_to_device_memcpy_ce']), tool: 'nvbandwidth' }, 'GB/s', [25.17]);
  const probeRuns = [
    { probe: 'ib-write-gpu', subject: 'mlx5_0/0000:41:00.0', outcome: 'ok', runs: 3, lastTs: 1_800_000_000_000 },
    { probe: 'ib-write-gpu', subject: 'mlx5_0/0000:41:00.0', outcome: 'failed', runs: 2, lastTs: 1_800_000_600_500 },
  ] as const;
  return renderProm({ node, stats: acc.result({ lastN: 5 }), window: 5, spool: { torn: 1, corrupt: 0 }, now: 1_800_000_000_000, probeRuns });
}

t.test('base units, one series per path, recipe and window as labels', async (t) => {
  const p = text();
  const lines = p.split('\n');
  const bps = (series: string, window: string, stat: string): string | undefined => lines.find((l) => l.startsWith(`gdrgate_bandwidth_bytes_per_second${series},window="${window}",stat="${stat}"} `));
  const host = SERIES('gpu001', 'ib-write-host', '', 'mlx5_0', 'host->nic->host', '622fa090e09b');
  const rxe = SERIES('gpu001', 'ib-write-host', '', 'rxe0', 'host->nic->host', 'ce82b0428d02');
  const h2d = SERIES('gpu001', 'nvbw-h2d', '0000:41:00.0', '', 'h2d', 'c9a9c45b6d4a');
  const gpu = SERIES('gpu001', 'ib-write-gpu', '0000:41:00.0', 'mlx5_0', 'gpu->nic->gpu', '18a4ed472419');
  t.equal(lines[0], '# HELP gdrgate_bandwidth_bytes_per_second Bandwidth of a probe path and recipe: min, p50 (the middle value; of an even count the upper one), nearest-rank p95 and p99, and the newest sample, over the whole spool (window="all") or the last 5 samples (window="recent").');
  t.equal(lines[1], '# TYPE gdrgate_bandwidth_bytes_per_second gauge');
  t.equal(bps(host, 'all', 'min'), `gdrgate_bandwidth_bytes_per_second${host},window="all",stat="min"} 11550000000`, '92.4 Gb/s in bytes/s');
  t.same([bps(rxe, 'all', 'p50'), bps(rxe, 'recent', 'p50')], [`gdrgate_bandwidth_bytes_per_second${rxe},window="all",stat="p50"} 115636961.28`, `gdrgate_bandwidth_bytes_per_second${rxe},window="recent",stat="p50"} 115636961.28`], '110.28 MiB/s (perftest MB) in bytes/s');
  t.same([bps(h2d, 'all', 'last'), bps(h2d, 'recent', 'last')], [`gdrgate_bandwidth_bytes_per_second${h2d},window="all",stat="last"} 25170000000`, `gdrgate_bandwidth_bytes_per_second${h2d},window="recent",stat="last"} 25170000000`], '25.17 GB/s');
  t.same([bps(gpu, 'all', 'p50'), bps(gpu, 'recent', 'p50')], [`gdrgate_bandwidth_bytes_per_second${gpu},window="all",stat="p50"} 1312500000`, `gdrgate_bandwidth_bytes_per_second${gpu},window="recent",stat="p50"} 1312500000`], 'recent p50 10.5 Gb/s while the whole history is higher');
  t.same(lines.filter((l) => l.startsWith('gdrgate_bandwidth_samples{')), [
    `gdrgate_bandwidth_samples${gpu},window="all"} 7`, `gdrgate_bandwidth_samples${gpu},window="recent"} 5`,
    `gdrgate_bandwidth_samples${host},window="all"} 3`, `gdrgate_bandwidth_samples${host},window="recent"} 3`,
    `gdrgate_bandwidth_samples${rxe},window="all"} 1`, `gdrgate_bandwidth_samples${rxe},window="recent"} 1`,
    `gdrgate_bandwidth_samples${h2d},window="all"} 1`, `gdrgate_bandwidth_samples${h2d},window="recent"} 1`,
  ]);
  t.same(lines.filter((l) => l.startsWith('gdrgate_spool_skipped_lines{')), ['gdrgate_spool_skipped_lines{node="gpu001",kind="torn"} 1', 'gdrgate_spool_skipped_lines{node="gpu001",kind="corrupt"} 0', 'gdrgate_spool_skipped_lines{node="gpu001",kind="future"} 0']);
  t.strictSame(p.split('\n').filter((l) => /^(# TYPE )?gdrgate_probe_/.test(l)), [
    '# TYPE gdrgate_probe_runs_total counter',
    'gdrgate_probe_runs_total{node="gpu001",probe="ib-write-gpu",subject="mlx5_0/0000:41:00.0",outcome="ok"} 3',
    'gdrgate_probe_runs_total{node="gpu001",probe="ib-write-gpu",subject="mlx5_0/0000:41:00.0",outcome="failed"} 2',
    '# TYPE gdrgate_probe_last_run_timestamp_seconds gauge',
    'gdrgate_probe_last_run_timestamp_seconds{node="gpu001",probe="ib-write-gpu",subject="mlx5_0/0000:41:00.0",outcome="ok"} 1800000000',
    'gdrgate_probe_last_run_timestamp_seconds{node="gpu001",probe="ib-write-gpu",subject="mlx5_0/0000:41:00.0",outcome="failed"} 1800000600.5',
  ], 'probe runs by outcome: a counter and the newest run of each');
  t.same(lines.filter((l) => l.startsWith('gdrgate_bandwidth_last_sample_timestamp_seconds{')), [
    `gdrgate_bandwidth_last_sample_timestamp_seconds${gpu}} 1800000000.006`,
    `gdrgate_bandwidth_last_sample_timestamp_seconds${host}} 1800000000.002`,
    `gdrgate_bandwidth_last_sample_timestamp_seconds${rxe}} 1800000000`,
    `gdrgate_bandwidth_last_sample_timestamp_seconds${h2d}} 1800000000`,
  ], 'the newest sample of each path, in seconds (the fleet judges its age by it)');
  t.equal(BYTES_PER_SECOND['Gb/s'] * 8, 1e9);
  t.ok(p.endsWith('\n'), 'ends with a newline');
});

t.test('samples from the future counted apart; task findings by code in one order, whatever order they were counted in', async (t) => {
  const p = renderProm({ node: 'gpu001', stats: [], window: 5, spool: { torn: 0, corrupt: 2, future: 3 }, now: 1_800_000_000_000, taskFindings: { 'job-memlock-propagated': 1, 'job-gpu-missing': 2 } });
  const lines = p.split('\n');
  t.same(lines.filter((l) => l.startsWith('gdrgate_spool_skipped_lines{')), ['gdrgate_spool_skipped_lines{node="gpu001",kind="torn"} 0', 'gdrgate_spool_skipped_lines{node="gpu001",kind="corrupt"} 2', 'gdrgate_spool_skipped_lines{node="gpu001",kind="future"} 3']);
  t.same(lines.filter((l) => l.startsWith('gdrgate_task_findings_total{')), ['gdrgate_task_findings_total{node="gpu001",code="job-gpu-missing"} 2', 'gdrgate_task_findings_total{node="gpu001",code="job-memlock-propagated"} 1']);
});

t.test('a path with no sample in the recent window (the judged window restarted after it): its window="all" series only', async (t) => {
  const acc = new StatsAccumulator();
  const recipe = r('host->nic->host', ['-d', 'mlx5_0']);
  [92.56, 92.4].forEach((value, i) => acc.add(makeSample({ ts: 1_800_000_000_000 + i, node: 'gpu001', job: String(i), probe: 'ib-write-host', recipe, gpu: null, nic: 'mlx5_0', bytes: 65536, value, unit: 'Gb/s' })));
  const stats = acc.result({ sinceTs: 1_800_000_000_002 });
  t.equal(stats[0]?.recent, null);
  const lines = renderProm({ node: 'gpu001', stats, window: 5, recent: 'the samples since the judged window restarted', spool: { torn: 0, corrupt: 0 }, now: 1_800_000_000_002 }).split('\n');
  const host = SERIES('gpu001', 'ib-write-host', '', 'mlx5_0', 'host->nic->host', '622fa090e09b');
  t.same(lines.filter((l) => /^gdrgate_bandwidth_(bytes_per_second|samples)\{/.test(l)), [
    ...['min', 'p50', 'p95', 'p99', 'last'].map((stat, i) => `gdrgate_bandwidth_bytes_per_second${host},window="all",stat="${stat}"} ${[11550000000, 11570000000, 11570000000, 11570000000, 11550000000][i]}`),
    `gdrgate_bandwidth_samples${host},window="all"} 2`,
  ]);
});

t.test('label values escaped', async (t) => {
  t.same(text('we"ird\\node').split('\n').filter((l) => l.startsWith('gdrgate_spool_skipped_lines{') || l.startsWith('gdrgate_samples_generated')), ['gdrgate_spool_skipped_lines{node="we\\"ird\\\\node",kind="torn"} 1', 'gdrgate_spool_skipped_lines{node="we\\"ird\\\\node",kind="corrupt"} 0', 'gdrgate_spool_skipped_lines{node="we\\"ird\\\\node",kind="future"} 0', 'gdrgate_samples_generated_timestamp_seconds{node="we\\"ird\\\\node"} 1800000000']);
  // A newline (SLURMD_NODENAME is not validated) would split the line, and node_exporter drops the whole textfile.
  const lines = text('a\nb').split('\n');
  t.equal(lines.find((l) => l.startsWith('gdrgate_spool_skipped_lines')), 'gdrgate_spool_skipped_lines{node="a\\nb",kind="torn"} 1');
  t.equal(lines.filter((l) => l.startsWith('b"')).length, 0, 'no line starts inside a label value');
});

t.test('promtool check metrics passes', { skip: !PROMTOOL && !process.env.CI && 'promtool not installed (Debian package prometheus)' }, async (t) => {
  t.ok(PROMTOOL, 'promtool is installed (CI installs the Debian package prometheus)');
  for (const node of ['gpu001', 'we"ird\\node', 'a\nb']) {
    const res = spawnSync(PROMTOOL ?? 'promtool', ['check', 'metrics'], { input: text(node), encoding: 'utf8' });
    t.equal(res.status, 0, `promtool exit 0 (${node})`, { stdout: res.stdout, stderr: res.stderr });
    t.equal(`${res.stdout}${res.stderr}`.trim(), '', 'no lint complaints');
  }
  const empty = renderProm({ node: 'n', stats: [], window: 5, spool: { torn: 0, corrupt: 0 }, now: 0 });
  t.equal(spawnSync(PROMTOOL ?? 'promtool', ['check', 'metrics'], { input: empty }).status, 0, 'no samples yet: still valid');
});

t.test('written atomically: replaced whole, no temp file left', async (t) => {
  const dir = scratchDir('gdrgate-prom-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const f = path.join(dir, 'gdrgate.prom');
  writeAtomic(f, 'old\n');
  writeAtomic(f, text());
  t.equal(readFileSync(f, 'utf8'), text());
  t.strictSame(readdirSync(dir), ['gdrgate.prom']);
  t.throws(() => writeAtomic(path.join(dir, 'missing/x.prom'), 'x'), /ENOENT/, 'a failed write throws and leaves nothing');
  t.strictSame(readdirSync(dir), ['gdrgate.prom']);
});
