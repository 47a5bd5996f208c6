// A wedged agent must not wedge the Prolog. The agent is alive (kill -0 passes) but stopped (SIGSTOP). Every Prolog
// still reaches its own gate within AGENT_TIMEOUT plus a margin and judges in process; when the agent runs again it
// drops the stale requests at once and answers the next Prolog.
//
// slurm/prolog.sh writes its request only into an empty FIFO, so a stopped agent holds one line for every Prolog
// that found it empty, and the first test shows that this is one line in all. The second makes the worst case
// directly, a FIFO full of stale lines (as ~1,000 Prologs of the earlier wrapper, whose lines went in whatever was
// there, left it): a Prolog that wrote into it would block for good, so each must give up without writing.
import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, readdirSync, readFileSync, readSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { makeGateEnv } from '../helpers/gate-env.js';
import { agentRuns, JOB, lastRun, slurmdShim, startAgent, stderrShows, installWrapper } from '../agent/_agent.js';

const TIMEOUT_S = 0.2;
// A shell, a kill and a wait on a loaded 2-core machine (the gate itself runs after the stamp). What the margin tells
// apart is a Prolog blocked in its request write: that one never gets past it by itself (only this test's 30 s spawn
// timeout ends it), so a margin well under 30 s keeps the bound meaningful without timing the shell's speed.
const MARGIN_S = 10;
const PROLOGS = 16;

/** Whole stale lines into the FIFO until it takes no more (a line under PIPE_BUF goes in whole or not at all). */
function fill(fifo: string, line: string): number {
  const fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  let n = 0;
  try {
    for (;;) {
      writeSync(fd, line);
      n++;
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
  } finally {
    closeSync(fd);
  }
  return n;
}

/** Processes still running this wrapper script (a request writer left behind would be one). */
function runningScripts(script: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(script);
      } catch {
        return false;
      }
    })
    .map(Number);
}

t.test('a stopped agent: one Prolog leaves its line, the others write none, and each judges in process', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  a.proc.kill('SIGSTOP');
  const script = installWrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=${TIMEOUT_S}\n`);
  const slurmd = slurmdShim(e.dir);
  const said: string[] = [];
  for (const job of ['3001', '3002', '3003', '3004']) {
    const r = spawnSync(slurmd, [script], { encoding: 'utf8', env: { ...JOB, SLURM_JOB_ID: job }, cwd: '/', timeout: 30_000 });
    t.equal(r.status, 0, `Prolog of job ${job}: exit 0`);
    const run = lastRun(e);
    said.push(`${run.job} ${run.startup} ${run.agent}`);
  }
  t.same(said, ['3001 snapshot no answer within 0.2s', ...['3002', '3003', '3004'].map((j) => `${j} snapshot its requests stayed unread for 0.2s`)]);
  // What the stopped agent would find: read here (and so taken away from it), as it would read it.
  const fd = openSync(path.join(a.dir, 'requests'), constants.O_RDONLY | constants.O_NONBLOCK);
  const buf = Buffer.alloc(1 << 16);
  let got = '';
  try {
    for (let n; (n = readSync(fd, buf)) > 0; ) got += buf.toString('utf8', 0, n);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
  } finally {
    closeSync(fd);
  }
  t.equal(got.split('\n').filter(Boolean).length, 1, `one request in the FIFO: ${JSON.stringify(got)}`);
  a.proc.kill('SIGCONT');
  const next = spawnSync(slurmd, [installWrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=20\n`)], { encoding: 'utf8', env: { ...JOB, SLURM_JOB_ID: '3005' }, cwd: '/', timeout: 60_000 });
  t.equal(next.status, 0);
  t.match((await agentRuns(e, '3005')).at(-1), { job: /^3005$/, startup: /^agent$/ }, 'the agent runs again and answers the next Prolog');
});

t.test('a stopped agent and a full request FIFO: each Prolog judges in process within AGENT_TIMEOUT', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  a.proc.kill('SIGSTOP');
  // The test's own pid: alive and root's, as a reused pid would be, but it holds no reply pipe on descriptor 87.
  const stale = `v2 prolog ${process.pid} 87 ${e.config}\n`;
  const lines = fill(path.join(a.dir, 'requests'), stale);
  t.ok(lines * stale.length > 60_000, `the FIFO is full: ${lines} stale requests, ${lines * stale.length} bytes`);

  // NODE stamps the moment the wrapper hands over to its own gate, then is node.
  const stamps = path.join(e.dir, 'stamps');
  const node = path.join(e.dir, 'node-stamp');
  writeFileSync(node, `#!/bin/bash\nprintf '%s\\n' "$EPOCHREALTIME" >> ${stamps}\nexec ${process.execPath} "$@"\n`, { mode: 0o755 });
  const script = installWrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=${TIMEOUT_S}\nNODE=${node}\n`);
  const slurmd = slurmdShim(e.dir);
  const late: string[] = [];
  for (let i = 0; i < PROLOGS; i++) {
    const job = String(1000 + i);
    const start = Date.now() / 1000;
    const r = spawnSync(slurmd, [script], { encoding: 'utf8', env: { ...JOB, SLURM_JOB_ID: job }, cwd: '/', timeout: 30_000 });
    if (r.status !== 0) {
      t.fail(`Prolog ${i + 1}: exit ${r.status} ${r.signal ?? ''} (a blocked request write is killed by this test's timeout)`);
      break;
    }
    const stamp = Number(readFileSync(stamps, 'utf8').trim().split('\n').at(-1));
    if (stamp - start > TIMEOUT_S + MARGIN_S) late.push(`Prolog ${i + 1}: ${(stamp - start).toFixed(2)} s`);
    const run = lastRun(e);
    if (run.job !== job || run.startup !== 'snapshot' || run.agent !== `its requests stayed unread for ${TIMEOUT_S}s`) t.fail(`Prolog ${i + 1} did not judge in process: ${JSON.stringify(run)}`);
  }
  t.same(late, [], `all ${PROLOGS} reached their own gate within ${TIMEOUT_S} s + ${MARGIN_S} s`);
  t.same(runningScripts(script), [], 'no request writer left behind');
  t.same(readdirSync(a.dir).sort(), ['agent.pid', 'requests'], 'no reply FIFO left behind');

  // The agent runs again: the stale requests name no waiting Prolog and are dropped, not judged one by one.
  a.proc.kill('SIGCONT');
  // The FIFO may reach the agent in more than one read, each batch said once its queue is empty: wait until the lines
  // said add up to what went in (or the bound passes), not just for the first of them.
  const dropped = (err: string): number[] => [...err.matchAll(/dropped (\d+) request\(s\): the Prolog stopped waiting/g)].map((m) => Number(m[1]));
  const said = dropped(await stderrShows(a, (err) => dropped(err).reduce((x, y) => x + y, 0) >= lines));
  t.equal(said.reduce((x, y) => x + y, 0), lines, `all ${lines} dropped, said in ${said.length} line(s)`);
  const next = spawnSync(slurmd, [installWrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=20\n`)], { encoding: 'utf8', env: { ...JOB, SLURM_JOB_ID: '2001' }, cwd: '/', timeout: 60_000 });
  t.equal(next.status, 0);
  t.match((await agentRuns(e, '2001')).at(-1), { job: /^2001$/, startup: /^agent$/ }, 'the next Prolog is answered by the agent');
});

// An AGENT_TIMEOUT under a hundredth made no wait at all, and the line was written without a look: into a full FIFO.
t.test('AGENT_TIMEOUT under a hundredth (0, 0.001): a stopped agent and a full FIFO still never take a write', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  a.proc.kill('SIGSTOP');
  fill(path.join(a.dir, 'requests'), `v2 prolog ${process.pid} 87 ${e.config}\n`);
  const slurmd = slurmdShim(e.dir);
  for (const [job, timeout] of [['4001', '0'], ['4002', '0.001']] as const) {
    const script = installWrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=${timeout}\n`);
    // A wrapper blocked in its write outlives the killed slurmd (it holds the FIFO's read end itself): ended here.
    t.teardown(() => runningScripts(script).forEach((pid) => process.kill(pid, 'SIGKILL')));
    const r = spawnSync(slurmd, [script], { encoding: 'utf8', env: { ...JOB, SLURM_JOB_ID: job }, cwd: '/', timeout: 30_000 });
    t.equal(r.status, 0, `AGENT_TIMEOUT=${timeout}: exit 0 (a blocked request write is killed by this test's timeout: ${r.signal ?? 'none'})`);
    t.same([lastRun(e)?.job, lastRun(e)?.startup, lastRun(e)?.agent], [job, 'snapshot', `its requests stayed unread for ${timeout}s`]);
  }
});

// A .conf is sourced: a `set -e` in it made the first timed-out read (the wait, or the answer's) end the Prolog with
// 142, a Prolog error that drains the node.
t.test("a .conf's set -e: a stopped agent still costs a Prolog its AGENT_TIMEOUT and no drain", async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  a.proc.kill('SIGSTOP');
  const script = installWrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=${TIMEOUT_S}\nset -euo pipefail\n`);
  const slurmd = slurmdShim(e.dir);
  const said: string[] = [];
  for (const job of ['4101', '4102']) {
    const r = spawnSync(slurmd, [script], { encoding: 'utf8', env: { ...JOB, SLURM_JOB_ID: job }, cwd: '/', timeout: 30_000 });
    said.push(`${r.status} ${JSON.stringify(r.stderr)} ${lastRun(e)?.job} ${lastRun(e)?.startup} ${lastRun(e)?.agent}`);
  }
  t.same(said, [`0 "" 4101 snapshot no answer within ${TIMEOUT_S}s`, `0 "" 4102 snapshot its requests stayed unread for ${TIMEOUT_S}s`]);
});
