// The TaskProlog's side of an agent's answer that comes just after the wait ended (review-agent A3, as
// test/agent/late-answer.test.ts is the Prolog's): the agent counts a write into the task's pipe as given (it logs the
// task answered), so the task takes it rather than judging its view a second time with gdrgate. A stand-in agent
// takes the task's request from the job's FIFO, opens the task's pipe while it waits, and writes its answer the moment
// the wrapper has closed fd 87; without the wrapper's last look that answer met a pipe with no reader.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { taskWrapperDir } from './_wrapper-dir.js';

const STAND_IN = `#!/bin/bash
trap '' PIPE
exec 3<>"$1"
read -r v kind job pid fd h nonce config <&3
exec 9>"/proc/$pid/fd/$fd" || exit 3
while [ -e "/proc/$pid/fd/$fd" ]; do :; done
body=$'print gdrgate: the late answer\\n-\\nend '"$nonce"$'\\n'
printf 'ok %s 0 1 %s\\n%s' "$nonce" "\${#body}" "$body" >&9
echo "wrote $?" >"$2"
`;

t.test("a task's answer written after its wait ended, before its pipe was gone: taken, no judgement by gdrgate", async (t) => {
  // gdrgate's stand-in: what a task prints when the wrapper judged with it instead of taking the agent's answer.
  const { dir, wrapper, fake } = taskWrapperDir('gdrgate-task-late-', () => '#!/bin/sh\necho "print gdrgate: judged"\n[ -z "${GDRGATE_VERDICT_FD-}" ] || echo 0 >"/proc/self/fd/$GDRGATE_VERDICT_FD"\nexit 0\n', 0o755);
  const state = path.join(dir, 'state');
  fs.mkdirSync(path.join(state, 'job-7'), { recursive: true, mode: 0o700 });
  const fifo = path.join(state, 'tasks-7');
  spawnSync('/usr/bin/mkfifo', ['-m', '600', fifo]);
  // Long enough for the stand-in to wake and open the pipe on a loaded machine; it writes only once the wait is over.
  fs.writeFileSync(path.join(dir, 'gdrgate-taskprolog.conf'), `NODE=/bin/sh\nCLI=${fake}\nCONFIG=/etc/x.json\nLOGGER=\nBLOB=\nAGENT=1\nAGENT_TIMEOUT=2\nSTATE=${state}\nHARD_TIMEOUT=20\n`);
  const script = path.join(dir, 'stand-in-agent.sh');
  fs.writeFileSync(script, STAND_IN, { mode: 0o755 });
  const said = path.join(dir, 'stand-in.out');
  // The wrapper keeps a pipe it stopped waiting on readable for 50 ms: the stand-in, spinning until then, runs at a
  // real-time priority where it may (root: CI).
  const rt = spawnSync('/usr/bin/chrt', ['-f', '10', '/bin/true']).status === 0;
  const agent = spawn(rt ? '/usr/bin/chrt' : '/bin/bash', rt ? ['-f', '10', '/bin/bash', script, fifo, said] : [script, fifo, said], { stdio: 'ignore' });
  t.teardown(() => void agent.kill('SIGKILL'));
  const r = spawnSync(wrapper, [], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', SLURM_JOB_ID: '7', SLURM_STEP_ID: '0', SLURM_LOCALID: '0' }, cwd: '/', timeout: 60_000 });
  await new Promise<void>((res) => (agent.exitCode !== null || agent.signalCode !== null ? res() : agent.on('exit', () => res())));
  t.same([r.status, r.stdout, r.stderr], [0, 'print gdrgate: the late answer\n', ''], "the agent's answer printed, exit 0, gdrgate not run");
  t.equal(fs.readFileSync(said, 'utf8'), 'wrote 0\n', 'its write went into a pipe the task still read');
});
