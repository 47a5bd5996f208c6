// `gdrgate epilog` as slurmd runs it (the built CLI, a fake scontrol): sampling policy, spool growth, bands from
// `baseline capture --with-probes`, one outlier against a sustained fall, the owned drain, dry runs, budgets.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { CLI, REPO } from '../helpers/paths.js';
import { validate } from '../helpers/schema.js';
import { bin, makeEpilogEnv, type EpilogEnv } from './_env.js';

const probes = (variant: string, over: Record<string, unknown> = {}) => ({
  tools: { ibWriteBw: bin(`ib_write_bw-${variant}`), nvbandwidth: bin('nvbandwidth') },
  sampling: {},
  nvbandwidth: { testcases: ['host_to_device_memcpy_ce'] },
  capture: { runs: 2 },
  ...over,
});
const lines = (e: EpilogEnv): string[] => (existsSync(path.join(e.spool, 'samples.jsonl')) ? readFileSync(path.join(e.spool, 'samples.jsonl'), 'utf8').trim().split('\n') : []);
const last = (s: string): string => s.trim().split('\n').pop() ?? '';

/** A healthy node: bands captured with the same probes, then `n` healthy epilogs. */
async function healthy(n: number, over: Record<string, unknown> = {}): Promise<EpilogEnv> {
  const e = await makeEpilogEnv(1);
  e.writeConfig(probes('healthy', over));
  const cap = cli(['baseline', 'capture', '--root', e.tree, '--class', 'rail', '--match', '*', '--with-probes', '--config', e.config]);
  if (cap.code !== 0) throw new Error(cap.stderr);
  writeFileSync(e.baseline, cap.stdout);
  for (let j = 1; j <= n; j++) if (e.epilog(String(j)).code !== 0) throw new Error(`healthy epilog ${j} failed`);
  return e;
}

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
  t.match(b.classes[0]!.probes, [
    { probe: 'ib-write-host', nic: 'mlx5_0', gpu: null, unit: 'Gb/s', p50: 92.56, samples: 2, warnBelow: 78.68, failBelow: 64.79, recipe: { tool: 'ib_write_bw', msgSize: 65536 } },
    { probe: 'ib-write-gpu', nic: 'mlx5_0', gpu: '0000:41:00.0', p50: 23.03, warnBelow: 19.58, failBelow: 16.12, recipe: { args: ['-d', 'mlx5_0'] } },
    { probe: 'nvbw-h2d', gpu: '0000:41:00.0', nic: null, unit: 'GB/s', p50: 25.17 },
  ]);
  const bad = cli(['baseline', 'capture', '--root', e.tree, '--with-probes', '--config', path.join(REPO, 'nope.json')]);
  t.equal(bad.code, 2, 'no config: usage error');
});

t.test('a sustained GPU↔NIC fall drains once with a gdrgate: bw- reason; one outlier does not', async (t) => {
  const e = await healthy(3);
  const prom = path.join(e.dir, 'gdrgate.prom');
  e.writeConfig(probes('gpu-slow', { promFile: prom }));
  const runs = ['4', '5', '6', '7'].map((j) => e.epilog(j));
  t.strictSame(runs.map((r) => r.code), [0, 0, 1, 1], 'exit 1 only once our reason is on the node');
  t.match(last(runs[0]!.stdout), /probes=ran samples=3 result=healthy exit=0 .* action=none$/, 'first slow sample: an outlier');
  t.match(last(runs[1]!.stdout), /result=healthy/, 'second: two of five, p50 still healthy');
  t.match(last(runs[2]!.stdout), / result=unhealthy exit=1 \d+ms reason="gdrgate: bw-gpu-path mlx5_0\/0000:41:00.0 p50 10.5 Gb\/s over 5 \(want >= 16.12 Gb\/s\) job=6" action=drained$/);
  t.match(runs[2]!.stdout, /^FAIL bw-gpu-path mlx5_0\/0000:41:00.0: GPU memory p50 10.5 Gb\/s over 5 .* while host memory on mlx5_0 is healthy \(p50 92.56 Gb\/s\)\n {5}GPU↔NIC path: /m);
  t.match(runs[2]!.stdout, /-> Check pcie-link and pcie-acs on this GPU↔NIC path/);
  t.match(last(runs[3]!.stdout), /action=kept: already drained by gdrgate/);
  t.equal(e.drainCalls().length, 1, 'one scontrol drain');
  t.match(e.drainCalls()[0], /^update nodename=gpu001 state=drain reason=gdrgate: bw-gpu-path /);
  t.equal(lines(e).length, 7 * 3, 'spool: 3 samples per probing epilog, 7 epilogs');
  t.ok(lines(e).every((l) => (JSON.parse(l) as { recipe?: unknown }).recipe), 'each sample carries its recipe');
  const log = readFileSync(e.log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  t.match(log.find((l) => l.msg === 'gdrgate epilog' && l.job === '6'), { result: 'unhealthy', exitCode: 1, action: 'drained', summary: { fail: 1 }, findings: [{ code: 'bw-gpu-path' }] });
  t.match(readFileSync(prom, 'utf8'), /gdrgate_bandwidth_samples\{node="gpu001",probe="ib-write-gpu",.*window="all"\} 7/);
});

t.test("a human's drain is never overwritten: nothing written, exit 0", async (t) => {
  const e = await healthy(2);
  e.adminDrain('rack maintenance');
  e.writeConfig(probes('gpu-slow'));
  const r = ['3', '4', '5'].map((j) => e.epilog(j));
  t.strictSame(r.map((x) => x.code), [0, 0, 0]);
  t.match(last(r[2]!.stdout), /result=unhealthy exit=0 .*action=kept: node is IDLE\+DRAIN for a reason that is not ours \(rack maintenance\)/);
  t.equal(e.drainCalls().length, 0);
});

t.test('sampling policy: outside it no process is spawned and nothing is written', async (t) => {
  const e = await healthy(0);
  e.writeConfig(probes('healthy', { sampling: { everyNthJob: 10 } }));
  const count = path.join(e.dir, 'spawns');
  const run = (job: string) =>
    spawnSync(process.execPath, ['--import', path.join(REPO, 'bench/count-spawns.mjs'), CLI, 'epilog', '--config', e.config], {
      encoding: 'utf8', env: { ...process.env, SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: job, GDRGATE_SPAWN_COUNT_FILE: count },
    });
  const out = run('121');
  t.equal(out.status, 0);
  t.match(out.stdout, /probes=skipped \(job 121 % 10 = 1\) result=healthy exit=0/);
  t.equal(readFileSync(count, 'utf8'), '0', 'no spawn');
  t.equal(lines(e).length, 0, 'no sample');
  const inside = run('120');
  t.match(inside.stdout, /probes=ran samples=3/);
  t.equal(readFileSync(count, 'utf8'), '5', 'inside: server and client per ib_write_bw run, nvbandwidth once');
  e.writeConfig(probes('healthy', { sampling: { minIntervalS: 3600 } }));
  t.match(e.epilog('122').stdout, /probes=skipped \(last probing run \d+ s ago \(every 3600 s at most\)\)/, 'the stamp of job 120 counts');
  t.equal(lines(e).length, 3);
});

t.test('dry run: probes whatever the policy says, writes nothing, drains nothing', async (t) => {
  const e = await healthy(3);
  e.writeConfig(probes('gpu-slow', { sampling: { everyNthJob: 1000 } }));
  const before = readdirSync(e.spool).map((f) => `${f}:${readFileSync(path.join(e.spool, f), 'utf8').length}`);
  const r = e.epilog('9', ['--dry-run']);
  t.equal(r.code, 0, 'one slow sample in memory: not a fail');
  t.match(r.stdout, /PASS bw-ok mlx5_0\/0000:41:00.0/);
  t.strictSame(readdirSync(e.spool).map((f) => `${f}:${readFileSync(path.join(e.spool, f), 'utf8').length}`), before, 'spool and stamp unchanged');
  t.equal(e.drainCalls().length, 0);
});

t.test('a hung probe: the epilog stays inside its budget and exits 0', async (t) => {
  const e = await healthy(0);
  e.writeConfig(probes('hang', { budgetMs: 2000, ibWriteBw: { timeoutMs: 1000 }, tools: { ibWriteBw: bin('ib_write_bw-hang') } }));
  const t0 = performance.now();
  const r = e.epilog('1');
  const ms = performance.now() - t0;
  t.equal(r.code, 0);
  t.ok(ms < 2000 + 3000, `${Math.round(ms)} ms: budget 2000 ms, plus kill grace and node start-up`);
  t.match(r.stdout, /^ERR  bw-probe-failed mlx5_0: timed out after \d+ ms$/m);
  t.match(last(r.stdout), /probes=ran samples=[01] result=healthy exit=0/, 'at most the instant nvbandwidth stand-in fits in what is left');
});

t.test('a malformed config: state still cleaned, fail-open, exit 0', async (t) => {
  const e = await makeEpilogEnv(1);
  writeFileSync(e.config, '{ "baseline": ');
  const r = e.epilog('5');
  t.equal(r.code, 0);
  t.match(r.stdout, /^config-error: .*config is not valid JSON/m);
  t.match(last(r.stdout), /^gdrgate epilog node=gpu001 job=5 view=none removed=false probes=error result=config-error exit=0/);
});

t.test('the real ib_write_bw as the configured tool: a recorded probe failure, exit 0', { skip: !existsSync('/usr/bin/ib_write_bw') && !process.env.CI && 'perftest not installed' }, async (t) => {
  const e = await makeEpilogEnv(1);
  e.writeConfig({ tools: { ibWriteBw: '/usr/bin/ib_write_bw' }, sampling: {}, ibWriteBw: { port: 18700 + (process.pid % 1000) } });
  const r = e.epilog('3');
  t.equal(r.code, 0);
  t.match(r.stdout, /^ERR  bw-probe-failed mlx5_0: no RDMA device \(exit 1\); Did not detect devices; If device exists, check if driver is up; Unable to find the Infiniband\/RoCE device$/m);
  t.match(last(r.stdout), /probes=ran samples=0 result=healthy exit=0/);
});
