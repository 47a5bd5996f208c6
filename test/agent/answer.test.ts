// agentProlog, the agent's half of a Prolog, called directly on the bundled capture: it answers only a plain
// pass, writes state and a run line only while the Prolog still waits for it, and delivers the answer once the
// job's directory is begun (an earlier attempt's gone), before the job's record, pcie-aer's reference and the run line.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { agentProlog } from '../../src/engine/prolog.js';
import { setLogFile } from '../../src/log.js';
import { breakLink, makeGateEnv } from '../helpers/gate-env.js';
import { healthyRun, maskedRun } from './_agent.js';

const env = { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42', SLURM_JOB_UID: String(process.getuid!()), SLURM_JOB_GID: String(process.getgid!()) };
const runLines = (log: string): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter((l) => l.includes('"gdrgate run"')) : []);
t.afterEach(() => setLogFile(undefined));

t.test('healthy, and the Prolog waits: the summary line, the job state, one run line', async (t) => {
  const e = makeGateEnv();
  const lines: string[] = [];
  const atDelivery: Record<string, boolean> = {};
  const deliver = (line: string): boolean => {
    lines.push(line);
    const dir = lstatSync(path.join(e.dir, 'run', 'job-42'), { throwIfNoEntry: false });
    atDelivery.begun = dir !== undefined && dir.isDirectory() && (dir.mode & 0o777) === 0o700 && readdirSync(path.join(e.dir, 'run', 'job-42')).length === 0;
    atDelivery.state = existsSync(path.join(e.dir, 'run', 'job-42', 'prolog.json'));
    atDelivery.aer = existsSync(path.join(e.dir, 'run', 'aer-last.json'));
    atDelivery.runLine = runLines(e.log).length > 0;
    return true;
  };
  const a = await agentProlog(e.config, { env, startup: 'agent', selfPid: process.pid }, () => true, deliver);
  t.same(a, { healthy: true, delivered: true });
  t.equal(lines.length, 1, 'delivered once');
  t.ok(/^gdrgate prolog node=vm job=42 result=healthy exit=0 \d+ms action=none$/.test(lines[0]!), lines[0]!);
  t.same(atDelivery, { begun: true, state: false, aer: false, runLine: false }, "the job's directory begun (empty, 0700) before the answer; its record, the AER reference and the run line after it");
  t.ok(existsSync(path.join(e.dir, 'run', 'job-42', 'prolog.json')));
  // pcie-aer: the agent records the counters it judged, as the gate's own Prolog does (one recordAer).
  const last = JSON.parse(readFileSync(path.join(e.dir, 'run', 'aer-last.json'), 'utf8')) as { job: string; devices: Record<string, unknown> };
  t.equal(last.job, '42');
  t.same(last.devices['0000:00:06.0'], { cor: null, rootCor: null, ceSta: 0 }, 'the H200: no counters, CESta 0');
  t.ok(existsSync(path.join(e.dir, 'run', 'aer-job-42.json')), "and for the job's Epilog");
  setLogFile(undefined); // flush to the file before reading it
  t.same(maskedRun(JSON.parse(runLines(e.log)[0]!) as object), healthyRun('42', 'agent', { pid: process.pid, client: process.pid }));
});

t.test('healthy, but the answer finds nobody: no AER reference, no run line (the Prolog judges and records itself)', async (t) => {
  const e = makeGateEnv();
  const a = await agentProlog(e.config, { env, startup: 'agent' }, () => true, () => false);
  t.same(a, { healthy: true, delivered: false });
  t.notOk(existsSync(path.join(e.dir, 'run', 'job-42')), 'the directory begun for the job is gone again');
  t.notOk(existsSync(path.join(e.dir, 'run', 'aer-last.json')), 'no AER reference');
  setLogFile(undefined);
  t.same(runLines(e.log), [], 'no run line');
});

t.test("the job's directory begun before the answer: an earlier attempt's gone; a record that fails or comes too late leaves nothing", async (t) => {
  const e = makeGateEnv();
  const run = path.join(e.dir, 'run');
  // A requeued job's earlier attempt: its record, a kept answer and its TaskProlog FIFO.
  mkdirSync(path.join(run, 'job-42'), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(run, 'job-42', 'task.v1_step=0'), 'kept\n');
  spawnSync('/usr/bin/mkfifo', [path.join(run, 'tasks-42')]);
  let seen = '';
  const deliver = (): boolean => {
    seen = `${readdirSync(path.join(run, 'job-42')).length} entries, FIFO ${existsSync(path.join(run, 'tasks-42')) ? 'there' : 'gone'}`;
    return true;
  };
  t.same(await agentProlog(e.config, { env, startup: 'agent' }, () => true, deliver), { healthy: true, delivered: true });
  t.equal(seen, '0 entries, FIFO gone', "at the answer: the earlier attempt's directory emptied, its FIFO removed");
  t.same(readdirSync(path.join(run, 'job-42')), ['prolog.json'], 'then the record');
  // The job's Epilog ran between the answer and the record (a job cancelled in its Prolog): no directory made again.
  const ended = (): boolean => (rmSync(path.join(run, 'job-42'), { recursive: true }), true);
  t.same(await agentProlog(e.config, { env, startup: 'agent' }, () => true, ended), { healthy: true, delivered: true });
  t.notOk(existsSync(path.join(run, 'job-42')), 'the ended job gets no directory');
  // The record fails after the directory was begun (a signing key others may read): the directory goes again.
  chmodSync(path.join(run, 'signing.key'), 0o644);
  t.same(await agentProlog(e.config, { env, startup: 'agent' }, () => true, () => true), { healthy: true, delivered: true });
  t.notOk(existsSync(path.join(run, 'job-42')), 'no root-owned directory left for the TaskProlog to wait on');
  chmodSync(path.join(run, 'signing.key'), 0o600);
});

t.test('healthy, but the Prolog stopped waiting: nothing written on its behalf', async (t) => {
  const e = makeGateEnv();
  const a = await agentProlog(e.config, { env, startup: 'agent' }, () => false, () => t.fail('nothing to deliver'));
  t.same(a, { healthy: false, why: 'the Prolog stopped waiting' });
  t.notOk(existsSync(path.join(e.dir, 'run', 'job-42')), 'no job state');
  t.same(runLines(e.log), [], 'no run line');
});

t.test('unhealthy: handed back with the count, no drain, no state, no run line', async (t) => {
  const e = makeGateEnv();
  breakLink(e.tree);
  let asked = false;
  const a = await agentProlog(e.config, { env, startup: 'agent' }, () => (asked = true), () => t.fail('nothing to deliver'));
  t.same(a, { healthy: false, why: 'unhealthy: 1 failing finding(s)' });
  t.notOk(asked, 'the Prolog is not even asked whether it waits');
  t.same(e.drainCalls(), []);
  t.notOk(existsSync(path.join(e.dir, 'run', 'job-42')));
  t.notOk(existsSync(path.join(e.dir, 'run', 'aer-last.json')), 'a judgement handed back records no AER counters (the gate judges again against the same reference)');
  t.same(runLines(e.log), []);
});

t.test('a config error, even fail-open: handed back, so the Prolog logs and applies its policy', async (t) => {
  const e = makeGateEnv();
  const missing = path.join(e.dir, 'missing.json');
  const a = await agentProlog(missing, { env, startup: 'agent' }, () => true, () => t.fail('nothing to deliver'));
  t.same(a, { healthy: false, why: `config-error: refusing ${missing}: ${missing}: ENOENT: no such file or directory, lstat '${missing}'` });
});
