// An agent's answer that comes just after the Prolog stopped waiting: the agent counts a write into the Prolog's pipe
// as delivered (it then keeps the job's record and its run line), so the Prolog takes it rather than judging the job a
// second time in process (review-agent A3: one Prolog in 80 at AGENT_TIMEOUT=0.03, one in a burst of 32 at 1 s, had two
// run lines). A stand-in agent opens the Prolog's pipe while it waits, and writes its line the moment the wrapper has
// closed fd 87 (the agent can no longer open it then); without the wrapper's last look the line met a pipe with no
// reader and the gate ran in process.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { makeGateEnv } from '../helpers/gate-env.js';
import { installWrapper, JOB, lines, slurmdShim } from './_agent.js';

const STAND_IN = `#!/bin/bash
trap '' PIPE
exec 3<>"$1/requests"
echo $$ >"$1/agent.pid"
read -r v kind pid fd config <&3
exec 9>"/proc/$pid/fd/$fd" || exit 3
while [ -e "/proc/$pid/fd/$fd" ]; do :; done
printf 'ok gdrgate prolog: the late answer\\n' >&9
echo "wrote $?" >"$1/stand-in.out"
`;

t.test("an answer written after the Prolog's wait ended, before its pipe was gone: taken, no second judgement", async (t) => {
  const e = makeGateEnv();
  const dir = path.join(e.dir, 'agent');
  mkdirSync(dir, { mode: 0o700 });
  spawnSync('/usr/bin/mkfifo', ['-m', '600', path.join(dir, 'requests')]);
  const script = path.join(e.dir, 'stand-in-agent.sh');
  writeFileSync(script, STAND_IN, { mode: 0o755 });
  // The wrapper keeps a pipe it stopped waiting on readable for 50 ms: the stand-in must write within that, so on a
  // loaded machine it runs at a real-time priority where it may (root: CI), for the second or two it spins.
  const rt = spawnSync('/usr/bin/chrt', ['-f', '10', '/bin/true']).status === 0;
  const agent = spawn(rt ? '/usr/bin/chrt' : '/bin/bash', rt ? ['-f', '10', '/bin/bash', script, dir] : [script, dir], { stdio: 'ignore' });
  t.teardown(() => void agent.kill('SIGKILL'));
  for (let i = 0; i < 3000 && !existsSync(path.join(dir, 'agent.pid')); i++) await new Promise((r) => setTimeout(r, 10));
  // Long enough for the stand-in to wake and open the pipe on a loaded machine; it writes only once the wait is over.
  const prolog = installWrapper(e, `AGENT=${dir}\nAGENT_TIMEOUT=2\n`);
  const r = spawnSync(slurmdShim(e.dir), [prolog], { encoding: 'utf8', env: JOB, cwd: '/', timeout: 60_000 });
  await new Promise<void>((res) => (agent.exitCode !== null ? res() : agent.on('exit', () => res())));
  t.same([r.status, r.stdout], [0, 'gdrgate prolog: the late answer\n'], "the agent's line printed, exit 0");
  t.equal(readFileSync(path.join(dir, 'stand-in.out'), 'utf8'), 'wrote 0\n', 'its write went into a pipe the Prolog still read');
  t.same(lines(e).filter((l) => l.msg === 'gdrgate run'), [], 'no run in process');
});
