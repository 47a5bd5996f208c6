// An agent restarting between the Prolog's look at its FIFO and the open (the old FIFO removed, the new one not yet made): the Prolog judges itself at once.
//
// slurm/prolog.sh looks for the FIFO and the agent's pid, then opens the FIFO read-write, and bash's `<>` makes the
// file when it is not there: a regular file, which reads as ever ready, so the Prolog took it for a FIFO holding
// unread lines and waited its whole AGENT_TIMEOUT for it to empty. The step between the look and the open is made
// here by the wrapper's .conf, which wraps `kill` (its last look, kill -0 on the agent's pid) to remove the FIFO as
// a stopping agent does.
import { spawnSync } from 'node:child_process';
import { lstatSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ExecaExec, type Exec } from '../../src/host/exec.js';
import { serveAgent } from '../../src/agent/serve.js';
import { makeGateEnv } from '../helpers/gate-env.js';
import { JOB, installWrapper, lastRun, slurmdShim, startAgent } from '../agent/_agent.js';

t.test('the FIFO gone between the look and the open: no wait, the gate in process says why', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const gone = `kill() { [ "$1" = -0 ] && /bin/rm -f -- "$AGENT/requests"; builtin kill "$@"; }\n`;
  // Long enough that a wait for it is told from none by this test's own 30 s bound, not by a clock.
  const script = installWrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=60\n${gone}`);
  const r = spawnSync(slurmdShim(e.dir), [script], { encoding: 'utf8', env: { ...JOB, SLURM_JOB_ID: '6001' }, cwd: '/', timeout: 30_000 });
  t.equal(r.status, 0, `exit 0 (${r.signal ?? 'no signal'}: a Prolog that waited its AGENT_TIMEOUT is killed by this test's 30 s bound)`);
  t.same([lastRun(e)?.job, lastRun(e)?.startup, lastRun(e)?.agent], ['6001', 'snapshot', `${a.dir}/requests is not a FIFO`]);
  t.equal(r.stderr, '', 'nothing on stderr');
});

// A .conf's `set -o posix` made a failed redirection of exec end the shell: the agent's directory gone between the
// look and the open (a stopped service's RuntimeDirectory is removed) ended the Prolog with 1, a Prolog error.
t.test("the agent's directory gone between the look and the open, under a .conf's set -o posix: the gate in process", async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const gone = `set -o posix\nkill() { [ "$1" = -0 ] && /bin/rm -rf -- "$AGENT"; builtin kill "$@"; }\n`;
  const script = installWrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=60\n${gone}`);
  const r = spawnSync(slurmdShim(e.dir), [script], { encoding: 'utf8', env: { ...JOB, SLURM_JOB_ID: '6002' }, cwd: '/', timeout: 30_000 });
  t.same([r.status, r.stderr], [0, ''], 'exit 0, nothing on stderr');
  t.same([lastRun(e)?.job, lastRun(e)?.startup, lastRun(e)?.agent], ['6002', 'snapshot', `cannot open ${a.dir}/requests`]);
});

// The other side of the same step: a Prolog's open (`<>` makes a plain file) between a starting agent's removal of
// the old FIFO and its mkfifo made the mkfifo fail (File exists), and the agent did not start.
t.test("a plain file made at the FIFO's name while the agent makes its FIFO: the agent starts with its FIFO there", async (t) => {
  const e = makeGateEnv();
  const dir = path.join(e.dir, 'agent');
  const real = new ExecaExec();
  const exec: Exec = {
    run: async (file, args, opts) => {
      writeFileSync(path.join(dir, 'requests'), ''); // a Prolog's `exec 88<>` just now
      return real.run(file, args, opts);
    },
  };
  const served = serveAgent({ dir, config: e.config, watch: [] }, exec);
  let started = false;
  await Promise.race([served.then(() => undefined), (async () => {
    for (let i = 0; i < 3000 && !started; i++) {
      try {
        started = lstatSync(path.join(dir, 'agent.pid')).isFile();
      } catch {
        /* not yet */
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })()]);
  t.equal(started, true, 'the agent started');
  t.equal(lstatSync(path.join(dir, 'requests')).isFIFO(), true, 'its FIFO is there');
  process.emit('SIGTERM');
  t.equal(await served, 0);
});
