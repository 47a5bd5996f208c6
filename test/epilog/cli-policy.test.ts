// `gdrgate epilog` spending: outside the sampling policy nothing is spawned or written, dry runs write nothing,
// a hung probe stays inside the budget.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { CLI, REPO } from '../helpers/paths.js';
import { healthy, last, lines, probes } from './_cli.js';
import { bin } from './_env.js';

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
