// `gdrgate samples --config C --spool X` (or $GDRGATE_CONFIG=C): the config is read whenever it is named, so its
// probes.window sets the recent window (it was read only without --spool, and the window fell back to 5); --spool
// and --window still win.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeSample, type ProbeRecipe } from '../../src/samples/sample.js';
import { appendSamples } from '../../src/samples/spool.js';
import { cli } from '../helpers/cli.js';

// The real GPU-memory figures of the corpus captures: 23.03 Gb/s (healthy T4), then 10.50 Gb/s (the slow one).
const recipe: ProbeRecipe = { tool: 'ib_write_bw', args: ['-d', 'mlx5_0', '-s', '65536', '-n', '5000', '-q', '1', '-F', '--report_gbits', '-p', '18515', '--use_cuda=0', '127.0.0.1'], msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: 0, direction: 'gpu->nic->gpu' };
const NOW = Date.now();

t.test('--config with --spool: probes.window of the config; --window over it; the spool given over the config\'s', async (t) => {
  const dir = t.testdir({ spool: {}, other: {} });
  const spool = path.join(dir, 'spool');
  // Ten epilogs a minute apart: 23.03 Gb/s, then the last three at 10.50.
  const samples = Array.from({ length: 10 }, (_, i) => makeSample({ ts: NOW - (10 - i) * 60_000, node: 'gpu001', job: String(i), probe: 'ib-write-gpu', recipe, gpu: '0000:41:00.0', nic: 'mlx5_0', bytes: 65536, value: i >= 7 ? 10.5 : 23.03, unit: 'Gb/s' }));
  t.equal(appendSamples({ dir: spool }, samples).ok, true);
  const config = path.join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ baseline: path.join(dir, 'baseline.json'), spool: path.join(dir, 'other'), probes: { window: 3, minSamples: 3 } }));
  const env = { SLURMD_NODENAME: 'gpu001' };
  const recent = (args: string[]): [string, number, number] => {
    const r = cli(['samples', '--json', ...args], env);
    const j = JSON.parse(r.stdout) as { spool: string; window: { label: string }; keys: { recent: { count: number; p50: number } }[] };
    return [j.window.label, j.keys[0]!.recent.count, j.keys[0]!.recent.p50];
  };
  t.strictSame(recent(['--config', config, '--spool', spool]), ['last 3', 3, 10.5], "the config's window: the three slow runs");
  t.strictSame(recent(['--config', config, '--spool', spool, '--window', '4']), ['last 4', 4, 10.5], '--window wins');
  t.strictSame(recent(['--spool', spool]), ['last 5', 5, 10.5], 'a spool alone: no config read, the default 5');
  const byEnv = cli(['samples', '--json', '--spool', spool], { ...env, GDRGATE_CONFIG: config });
  t.strictSame((JSON.parse(byEnv.stdout) as { window: { label: string } }).window.label, 'last 3', '$GDRGATE_CONFIG names the config as --config does');
  const prom = path.join(dir, 'gdrgate.prom');
  t.equal(cli(['samples', '--config', config, '--spool', spool, '--prom', prom], env).code, 0);
  t.strictSame(readFileSync(prom, 'utf8').split('\n').filter((l) => l.startsWith('gdrgate_bandwidth_samples{')).map((l) => l.split(' ').pop()), ['10', '3'], 'the textfile: all 10, recent 3');
  const bad = path.join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ baseline: path.join(dir, 'baseline.json'), probes: { window: 2, minSamples: 3 } }));
  const r = cli(['samples', '--config', bad, '--spool', spool], env);
  t.strictSame([r.code, r.stdout, r.stderr], [2, '', `gdrgate: ${bad}: probes.window 2 is below probes.minSamples 3: no window would ever hold enough samples to judge\n`], 'a config named is checked, even with --spool');
  const e = cli(['samples', '--spool', spool], { ...env, GDRGATE_CONFIG: bad });
  t.strictSame([e.code, e.stdout, e.stderr], [2, '', `gdrgate: ${bad}: probes.window 2 is below probes.minSamples 3: no window would ever hold enough samples to judge\n`], 'and one named by $GDRGATE_CONFIG');
});
