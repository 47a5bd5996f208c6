// `gdrgate epilog` as slurmd runs it (the built CLI, a fake scontrol): the state-only epilog, bands from
// `baseline capture --with-probes`, a malformed config, the real tool. Drains: cli-drain.test.ts; sampling
// policy, dry runs and budgets: cli-policy.test.ts.
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { literal } from '../helpers/exactly.js';
import { REPO } from '../helpers/paths.js';
import { validate } from '../helpers/schema.js';
import { healthy, last, probes } from './_cli.js';
import { bin, makeEpilogEnv } from './_env.js';

t.test('without a probes section: the state-only epilog, unchanged', async (t) => {
  const e = await makeEpilogEnv(1);
  writeFileSync(e.config, JSON.stringify({ baseline: e.baseline, root: e.tree, logFile: e.log, stateDir: path.join(e.dir, 'run'), spool: e.spool }));
  const r = e.epilog('78');
  t.equal(r.code, 0);
  t.equal(r.stdout, 'gdrgate epilog node=gpu001 job=78 view=none removed=false\n');
  t.notOk(existsSync(e.spool), 'no spool touched');
});

t.test('baseline capture --with-probes: bands with their recipes, valid against the schema', async (t) => {
  const e = await healthy(0);
  const b = JSON.parse(readFileSync(e.baseline, 'utf8')) as { classes: { probes: Record<string, unknown>[] }[] };
  t.strictSame(validate('baseline', b), []);
  const v = cli(['baseline', 'validate', e.baseline]);
  t.equal(v.code, 0, v.stdout + v.stderr);
  const ib = (direction: string, cuda: string[]) => {
    const args = ['-d', 'mlx5_0', '-s', '65536', '-n', '5000', '-q', '1', '-F', '--report_gbits', '-p', '18515', ...cuda, '127.0.0.1'];
    return { tool: 'ib_write_bw', args, msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: null, direction };
  };
  const h2d = { tool: 'nvbandwidth', args: ['-t', 'host_to_device_memcpy_ce'], msgSize: null, iterations: null, durationS: null, qps: null, numaNode: null, direction: 'h2d' };
  t.same(b.classes[0]!.probes, [
    { probe: 'ib-write-host', gpu: null, nic: 'mlx5_0', direction: 'host->nic->host', recipe: ib('host->nic->host', []), unit: 'Gb/s', p50: 92.56, samples: 2, warnBelow: 78.68, failBelow: 64.79 },
    { probe: 'ib-write-gpu', gpu: '0000:41:00.0', nic: 'mlx5_0', direction: 'gpu->nic->gpu', recipe: ib('gpu->nic->gpu', ['--use_cuda=0']), unit: 'Gb/s', p50: 23.03, samples: 2, warnBelow: 19.58, failBelow: 16.12 },
    { probe: 'nvbw-h2d', gpu: '0000:41:00.0', nic: null, direction: 'h2d', recipe: h2d, unit: 'GB/s', p50: 25.17, samples: 2, warnBelow: 21.39, failBelow: 17.62 },
  ], 'three bands: host and GPU memory over mlx5_0, host to GPU 0 (warn 0.85 x, fail 0.7 x the p50)');
  const bad = cli(['baseline', 'capture', '--root', e.tree, '--with-probes', '--config', path.join(REPO, 'nope.json')]);
  t.equal(bad.code, 2, 'no config: usage error');
});

t.test('a malformed config: state still cleaned, fail-open, exit 0', async (t) => {
  const e = await makeEpilogEnv(1);
  writeFileSync(e.config, '{ "baseline": ');
  const r = e.epilog('5');
  t.equal(r.code, 0);
  t.match(r.stdout, new RegExp(`^config-error: ${literal(e.config)}: config is not valid JSON: Unexpected end of JSON input\\ngdrgate epilog node=gpu001 job=5 view=none removed=false probes=error result=config-error exit=0 \\d+ms action=none\\n$`));
  t.match(last(r.stdout), /^gdrgate epilog node=gpu001 job=5 view=none removed=false probes=error result=config-error exit=0 \d+ms action=none$/);
});

t.test('the real ib_write_bw as the configured tool: a recorded probe failure, exit 0', { skip: !existsSync('/usr/bin/ib_write_bw') && !process.env.CI && 'perftest not installed' }, async (t) => {
  const e = await makeEpilogEnv(1);
  e.writeConfig({ tools: { ibWriteBw: '/usr/bin/ib_write_bw' }, sampling: {}, ibWriteBw: { port: 18700 + (process.pid % 1000) } });
  const r = e.epilog('3');
  t.equal(r.code, 0);
  const failed = ' {5}The probe ran but gave no measurement; the message carries the tool’s own failure\\. Never a drain by itself\\.\\n {5}-> Run the recipe by hand on the node; if GPU memory fails while host memory works, check nvidia_peermem\\/DMA-BUF and memlock\\. \\[server\\]\\n';
  t.match(r.stdout, new RegExp(`^ERR  bw-probe-failed mlx5_0: no RDMA device \\(exit 1\\); Did not detect devices; If device exists, check if driver is up; Unable to find the Infiniband\\/RoCE device\\n${failed}ERR  bw-probe-failed mlx5_0\\/0000:41:00\\.0: usage error \\(exit 1\\); Invalid Command or flag\\.; Parser function exited with Error\\n${failed}gdrgate epilog node=gpu001 job=3 view=none removed=false probes=ran samples=0 result=healthy exit=0 \\d+ms action=none\\n$`));
  t.match(last(r.stdout), /^gdrgate epilog node=gpu001 job=3 view=none removed=false probes=ran samples=0 result=healthy exit=0 \d+ms action=none$/);
});
