// `gdrgate epilog` spending: outside the sampling policy nothing is spawned or written, dry runs write nothing,
// a hung probe stays inside the budget.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { CLI, REPO } from '../helpers/paths.js';
import { healthy, last, lines, probes } from './_cli.js';
import { bin } from './_env.js';
import { DEFAULTS } from '../../src/config.js';
import { EXEC_GRACE_MS } from '../../src/host/exec.js';
import { SETPRIV } from '../../src/probes/run.js';

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
  t.match(out.stdout, /^gdrgate epilog node=gpu001 job=121 view=none removed=false probes=skipped \(job 121 % 10 = 1\) result=healthy exit=0 \d+ms action=none\n$/);
  t.equal(readFileSync(count, 'utf8'), '0', 'no spawn');
  t.equal(lines(e).length, 0, 'no sample');
  const inside = run('120');
  t.match(inside.stdout, /^SKIP bw-pending 0000:41:00\.0: p50 25\.17 GB\/s over 1; judged from 3 samples on\nSKIP bw-pending mlx5_0: p50 92\.56 Gb\/s over 1; judged from 3 samples on\nSKIP bw-pending mlx5_0\/0000:41:00\.0: p50 23\.03 Gb\/s over 1; judged from 3 samples on\ngdrgate epilog node=gpu001 job=120 view=none removed=false probes=ran samples=3 result=healthy exit=0 \d+ms action=none\n$/);
  t.equal(readFileSync(count, 'utf8'), existsSync(SETPRIV) ? '6' : '5', 'inside: setpriv asked once whether it ties the probes to the gate (when there), server and client per ib_write_bw run, nvbandwidth once');
  e.writeConfig(probes('healthy', { sampling: { minIntervalS: 3600 } }));
  t.match(e.epilog('122').stdout, /^gdrgate epilog node=gpu001 job=122 view=none removed=false probes=skipped \(last probing run \d+ s ago \(every 3600 s at most\)\) result=healthy exit=0 \d+ms action=none\n$/, 'the stamp of job 120 counts');
  t.equal(lines(e).length, 3);
});

t.test('dry run: probes whatever the policy says, writes nothing, drains nothing', async (t) => {
  const e = await healthy(3);
  e.writeConfig(probes('healthy', { sampling: { everyNthJob: 1000 } }));
  const before = readdirSync(e.spool).map((f) => `${f}:${readFileSync(path.join(e.spool, f), 'utf8').length}`);
  const r = e.epilog('9', ['--dry-run']);
  t.equal(r.code, 0, 'judged with the sample in memory');
  t.match(r.stdout, /^PASS bw-ok 0000:41:00\.0: nvbw-h2d p50 25\.17 GB\/s over 4 \(band: warn < 21\.39, fail < 17\.62 GB\/s\)\nPASS bw-ok mlx5_0: ib-write-host p50 92\.56 Gb\/s over 4 \(band: warn < 78\.68, fail < 64\.79 Gb\/s\)\nPASS bw-ok mlx5_0\/0000:41:00\.0: ib-write-gpu p50 23\.03 Gb\/s over 4 \(band: warn < 19\.58, fail < 16\.12 Gb\/s\)\ngdrgate epilog node=gpu001 job=9 probes=ran samples=3 result=healthy exit=0 \d+ms action=none\n$/);
  t.strictSame(readdirSync(e.spool).map((f) => `${f}:${readFileSync(path.join(e.spool, f), 'utf8').length}`), before, 'spool and stamp unchanged');
  t.equal(e.drainCalls().length, 0);
});

t.test('a hung probe: the epilog stays inside its budget and exits 0', async (t) => {
  // The stand-in hangs for HANG_MS (`exec sleep 60`). Only figures that cannot stretch with the machine's load are
  // compared with a bound: the gate's own in-process measurements, and the length of the hang being cut. The wall
  // clock of the whole process (node start-up included) is not asserted: speed is `npm run bench`'s.
  const HANG_MS = 60_000;
  const budgetMs = 2000;
  const timeoutMs = 1000;
  const e = await healthy(0);
  e.writeConfig(probes('hang', { budgetMs, ibWriteBw: { timeoutMs }, tools: { ibWriteBw: bin('ib_write_bw-hang') } }));
  const r = e.epilog('1');
  t.equal(r.code, 0, 'exited 0 (a hang waited out would have hit the 60 s spawn timeout first: no exit code)');
  const cut = [...r.stdout.matchAll(/^ERR  bw-probe-failed mlx5_0\S*: timed out after (\d+) ms$/gm)].map((m) => Number(m[1]));
  t.ok(cut.length >= 1, `the hung probe was timed out (${cut.join(', ')} ms)`);
  // Each probe's own timeout is enforced: its process group is killed at the timeout and its pipes are waited for
  // EXEC_GRACE_MS at most; the server's head start is inside the same deadline.
  for (const ms of cut) t.ok(ms < HANG_MS / 2, `timed out after ${ms} ms: cut, not the stand-in's ${HANG_MS} ms waited out`);
  const logged = readFileSync(e.log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'gdrgate epilog' && l.job === '1');
  const probeMs = Number(logged?.probeMs);
  // The probing as the gate measured it (probeMs of its log line): no probe starts after the budget, none outlives
  // it by more than the kill grace (a killed probe usually needs none of it: the room a starved CPU's late timers
  // get). A budget not enforced would read ≥ HANG_MS here.
  t.ok(Number.isFinite(probeMs) && probeMs <= budgetMs + EXEC_GRACE_MS, `probing took ${probeMs} ms by the gate's clock: budget ${budgetMs} ms + grace ${EXEC_GRACE_MS} ms`);
  // The whole epilog's hard limit (src/epilog/command.ts): the probe budget, then the gate's deadline for the rest.
  const total = Number(/ (\d+)ms action=/.exec(last(r.stdout))?.[1]);
  t.ok(total <= budgetMs + DEFAULTS.deadlineMs, `the whole epilog ${total} ms by its own clock: inside budget + deadline (${budgetMs + DEFAULTS.deadlineMs} ms), the ${HANG_MS} ms hang cut`);
  t.match(last(r.stdout), /^gdrgate epilog node=gpu001 job=1 view=none removed=false probes=ran samples=[01] result=healthy exit=0 \d+ms action=none$/, 'at most the instant nvbandwidth stand-in fits in what is left');
});
