// `gdrgate samples`: per path and recipe, whole history against the recent window, from a spool with rotated files.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

import path from 'node:path';
import { makeSample, type ProbeRecipe } from '../../src/samples/sample.js';
import { appendSamples } from '../../src/samples/spool.js';
import { cli } from '../helpers/cli.js';
import { literal } from '../helpers/exactly.js';
import { scratchDir } from '../helpers/scratch.js';

const dir = scratchDir('gdrgate-samples-');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const recipe = (gpu: boolean): ProbeRecipe => ({
  tool: 'ib_write_bw', args: ['-d', 'mlx5_0', '-s', '65536', '-n', '5000', '-q', '1', '-F', '--report_gbits', '-p', '18515', ...(gpu ? ['--use_cuda=0'] : []), '127.0.0.1'],
  msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: 0, direction: gpu ? 'gpu->nic->gpu' : 'host->nic->host',
});
const NOW = Date.now();
// 20 epilogs an hour apart: host steady at 92.56, GPU 23.03 until the last five, which fall to 10.5.
for (let i = 0; i < 20; i++) {
  const ts = NOW - (19 - i) * 3_600_000;
  const s = [
    makeSample({ ts, node: 'gpu001', job: String(100 + i), probe: 'ib-write-host', recipe: recipe(false), gpu: null, nic: 'mlx5_0', bytes: 65536, value: 92.56, unit: 'Gb/s' }),
    makeSample({ ts, node: 'gpu001', job: String(100 + i), probe: 'ib-write-gpu', recipe: recipe(true), gpu: '0000:41:00.0', nic: 'mlx5_0', bytes: 65536, value: i >= 15 ? 10.5 : 23.03, unit: 'Gb/s' }),
  ];
  if (!appendSamples({ dir, maxBytes: 8 * 1024, keep: 5 }, s).ok) throw new Error('append');
}

t.test('text: two rows per path (all, last 5), recipes, spool line', async (t) => {
  const r = cli(['samples', '--spool', dir, '--window', '5']);
  t.equal(r.code, 0, r.stderr);
  t.comment(`\n${r.stdout}`);
  const out = r.stdout.split('\n');
  t.equal(out[0], 'PROBE          NIC     GPU           DIRECTION        RECIPE        UNIT  WINDOW  N   MIN    P50    P95    P99    LAST');
  t.equal(out[1], 'ib-write-gpu   mlx5_0  0000:41:00.0  gpu->nic->gpu    52b712aa1a79  Gb/s  all     20  10.50  23.03  23.03  23.03  10.50');
  t.equal(out[2], `${' '.repeat(74)}last 5  5   10.50  10.50  10.50  10.50  10.50`);
  t.equal(out[3], 'ib-write-host  mlx5_0  -             host->nic->host  0083010127c6  Gb/s  all     20  92.56  92.56  92.56  92.56  92.56');
  t.same(out.slice(4, 7), [`${' '.repeat(74)}last 5  5   92.56  92.56  92.56  92.56  92.56`, 'recipe 0083010127c6: ib_write_bw -d mlx5_0 -s 65536 -n 5000 -q 1 -F --report_gbits -p 18515 127.0.0.1 (NUMA node 0)', 'recipe 52b712aa1a79: ib_write_bw -d mlx5_0 -s 65536 -n 5000 -q 1 -F --report_gbits -p 18515 --use_cuda=0 127.0.0.1 (NUMA node 0)']);
  t.match(out.slice(7).join('\n'), new RegExp(`^spool ${literal(dir)}: [3-6] file\\(s\\), 40 samples\n$`), 'rotated files read, nothing lost');
});

t.test('--json, --probe, --since', async (t) => {
  const j = JSON.parse(cli(['samples', '--spool', dir, '--json', '--probe', 'ib-write-gpu', '--since', '3h']).stdout) as {
    samples: number; window: { label: string }; keys: { probe: string; recipe: { args: string[] }; all: { count: number }; recent: { count: number; p50: number } }[];
  };
  t.equal(j.keys.length, 1);
  t.same([j.keys[0]?.probe, j.keys[0]?.all, j.keys[0]?.recent], ['ib-write-gpu', { count: 20, min: 10.5, p50: 23.03, p95: 23.03, p99: 23.03, last: 10.5, lastTs: NOW }, { count: 3, min: 10.5, p50: 10.5, p95: 10.5, p99: 10.5, last: 10.5, lastTs: NOW }], 'since 3h: the last three (the fourth is just over 3 h old)');
  t.same(j.keys[0]!.recipe.args, ['-d', 'mlx5_0', '-s', '65536', '-n', '5000', '-q', '1', '-F', '--report_gbits', '-p', '18515', '--use_cuda=0', '127.0.0.1']);
  t.equal(j.window.label, 'since 3h');
  const bad = cli(['samples', '--spool', dir, '--since', 'yesterday']);
  t.equal(bad.code, 2, 'a --since it cannot read is a usage error');
  t.equal(bad.stderr, 'gdrgate: --since yesterday: give a duration (90m, 24h, 7d) or an ISO time (2026-11-29T14:00:00Z)\n');
  const none = cli(['samples', '--spool', path.join(dir, 'none')]);
  t.same([none.code, none.stdout, none.stderr], [2, '', `gdrgate: cannot read the spool ${path.join(dir, 'none')}: cannot list ${path.join(dir, 'none')}: ENOENT: no such file or directory, scandir '${path.join(dir, 'none')}'\n`], 'a spool that is not there: said, exit 2');
  mkdirSync(path.join(dir, 'empty'));
  t.same(cli(['samples', '--spool', path.join(dir, 'empty')]).stdout, `no samples in ${path.join(dir, 'empty')}\nspool ${path.join(dir, 'empty')}: 0 file(s), 0 samples\n`, 'an empty spool');
});

const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find(existsSync);
t.test('--prom writes a textfile promtool accepts', { skip: !PROMTOOL && !process.env.CI && 'promtool not installed' }, async (t) => {
  const f = path.join(dir, 'out.prom');
  t.equal(cli(['samples', '--spool', dir, '--prom', f]).code, 0);
  const check = spawnSync(PROMTOOL ?? 'promtool', ['check', 'metrics'], { input: readFileSync(f), encoding: 'utf8' });
  t.equal(check.status, 0, check.stdout + check.stderr);
  t.same(readFileSync(f, 'utf8').split('\n').filter((l) => l.includes('window="recent",stat="p50"')), ['gdrgate_bandwidth_bytes_per_second{node="gpu001",probe="ib-write-gpu",gpu="0000:41:00.0",nic="mlx5_0",direction="gpu->nic->gpu",recipe="52b712aa1a79",window="recent",stat="p50"} 1312500000', 'gdrgate_bandwidth_bytes_per_second{node="gpu001",probe="ib-write-host",gpu="",nic="mlx5_0",direction="host->nic->host",recipe="0083010127c6",window="recent",stat="p50"} 11570000000']);
});

t.test('--prom --since: HELP says the window holds every sample since then, not the last N', async (t) => {
  const f = path.join(dir, 'since.prom');
  // Just over 3 h ago: the last three GPU samples (the fourth is 3 h old), and the last three host ones.
  const since = new Date(NOW - 3 * 3_600_000 + 1000).toISOString();
  t.equal(cli(['samples', '--spool', dir, '--window', '5', '--since', since, '--prom', f]).code, 0);
  const prom = readFileSync(f, 'utf8').split('\n');
  t.equal(prom.find((l) => l.startsWith('# HELP gdrgate_bandwidth_bytes_per_second ')), `# HELP gdrgate_bandwidth_bytes_per_second Bandwidth of a probe path and recipe: min, p50 (the middle value; of an even count the upper one), nearest-rank p95 and p99, and the newest sample, over the whole spool (window="all") or every sample since ${since} (--since) (window="recent").`);
  t.strictSame(prom.filter((l) => l.startsWith('gdrgate_bandwidth_samples{') && l.includes('window="recent"')).map((l) => l.split(' ').pop()), ['3', '3'], 'what the series holds: the samples since then');
});

t.test("a spool holding another node's samples (copied from a golden image): this node's alone, the others said", async (t) => {
  const spool = path.join(dir, 'golden');
  mkdirSync(spool);
  const at = (node: string, i: number, value: number) =>
    makeSample({ ts: NOW - (20 - i) * 60_000, node, job: String(i), probe: 'ib-write-gpu', recipe: recipe(true), gpu: '0000:41:00.0', nic: 'mlx5_0', bytes: 65536, value, unit: 'Gb/s' });
  // Ten of the image's node at 400 Gb/s, then three of gpu007's own at 100.
  appendSamples({ dir: spool }, [...Array.from({ length: 10 }, (_, i) => at('golden', i, 400)), ...[10, 11, 12].map((i) => at('gpu007', i, 100))]);
  const f = path.join(spool, 'out.prom');
  const r = cli(['samples', '--spool', spool, '--json', '--prom', f], { SLURMD_NODENAME: 'gpu007' });
  t.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout) as { keys: { all: { count: number; p50: number }; recent: { count: number; p95: number } }[] };
  t.same(j.keys.map((k) => [k.all.count, k.all.p50, k.recent.count, k.recent.p95]), [[3, 100, 3, 100]], "gpu007's three samples only");
  t.equal(r.stderr, 'gdrgate: samples of gpu007 only; left out those of golden (10)\n');
  const prom = readFileSync(f, 'utf8');
  // Before: node="gpu007" with the golden node's 400 Gb/s (5e10 bytes/s) as its p50 over all 13.
  t.same(prom.split('\n').filter((l) => /window="all",stat="p50"/.test(l)), ['gdrgate_bandwidth_bytes_per_second{node="gpu007",probe="ib-write-gpu",gpu="0000:41:00.0",nic="mlx5_0",direction="gpu->nic->gpu",recipe="' + /recipe="([0-9a-f]{12})"/.exec(prom)![1] + '",window="all",stat="p50"} 12500000000']);
  const mine = cli(['samples', '--spool', spool, '--json', '--node', 'golden']);
  t.same((JSON.parse(mine.stdout) as { keys: { all: { count: number } }[] }).keys.map((k) => k.all.count), [10], '--node golden: its ten');
  const neither = cli(['samples', '--spool', spool, '--prom', path.join(spool, 'no.prom')], { SLURMD_NODENAME: 'gpu009' });
  t.same([neither.code, neither.stderr, existsSync(path.join(spool, 'no.prom'))], [2, `gdrgate: ${spool} holds no sample of gpu009, only of golden (10), gpu007 (3): say whose with --node; ${path.join(spool, 'no.prom')} not written\n`, false]);
});
