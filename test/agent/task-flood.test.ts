// A user who floods their job's TaskProlog FIFO with requests whose reply pipe is full (never read) must not hold up the Prolog's answers (a queue of its own), nor another job's TaskProlog (a FIFO and a queue a job), and one process's flood not another TaskProlog's of the same job (one request per asker); another user cannot even open that FIFO.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startRig, USER } from '../task/_agent-rig.js';

const OTHER = 4246;

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the requests come from another uid)', () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  await t.test('a flood of undeliverable task requests', async (t) => {
  // The rig's Prolog asks the agent (it waits 10 s for it); the flood below holds 40 requests that cannot be delivered.
  const prolog = (job: string): number => {
    const before = rig.runs();
    t.equal(rig.prolog(job), 0, `job ${job}: the Prolog passes`);
    return rig.runs() - before;
  };
  const task = async (job: string): Promise<number> => {
    const before = rig.runs();
    rig.conf(true, 'AGENT_TIMEOUT=10');
    const r = await rig.task({ SLURM_JOB_ID: job, SLURM_STEP_ID: '0' });
    t.equal(r.code, 0, `job ${job}: the TaskProlog passes`, { stderr: r.stderr });
    return rig.runs() - before;
  };
  t.equal(prolog('800'), 0, 'before the flood: the agent answers the Prolog (no Node started)', { agent: rig.agentErr() });
  t.equal(await task('800'), 0, 'before the flood: the agent answers the TaskProlog');
  const fifo = path.join(rig.stateDir, 'tasks-800');
  const st = fs.lstatSync(fifo);
  t.same([st.isFIFO(), st.uid, st.mode & 0o777], [true, USER, 0o600], 'the job has its FIFO, its user\'s, 0600');
  const other = spawnSync('/bin/bash', ['-c', 'exec 3<>"$1"', 'open', fifo], { uid: OTHER, gid: OTHER, encoding: 'utf8' });
  t.not(other.status, 0, 'another user cannot open it');

  // The attacker: processes of USER's, each holding a pipe at fd 87 filled to the brim, with facts of its own in its
  // job's directory (so that the agent answers it), asking `k` times to be answered there.
  const flood = async (procs: number, k: number): Promise<void> => {
    const ps = Array.from({ length: procs }, () =>
      spawn('/bin/bash', ['-c', `exec 87<<<'' && exec 87<>/proc/$$/fd/87 && read -r -u 87 _ && head -c 65536 /dev/zero >&87 && printf 'gdrgate-task-facts 1 0123456789abcdef %s %s 0\\nroot\\t%s\\nend\\n' $$ $EUID "$4" >"$5/task.$$.facts" && for ((i = 0; i < $3; i++)); do printf 'v1 task 800 %s 87 %s 0123456789abcdef %s\\n' $$ $$ "$1"; done >"$2" && echo flooded && exec sleep 300`, 'flood', rig.config, fifo, String(k), rig.tree, path.join(rig.stateDir, 'job-800')], { uid: USER, gid: USER, stdio: ['ignore', 'pipe', 'inherit'] }),
    );
    t.teardown(() => ps.forEach((p) => p.kill('SIGKILL')));
    await Promise.all(ps.map((p) => new Promise<void>((res) => p.stdout!.once('data', () => res()))));
  };
  await flood(1, 40);
  t.equal(prolog('801'), 0, 'during the flood: the agent answers the Prolog', { agent: rig.agentErr().slice(-2000) });
  t.equal(await task('801'), 0, 'during the flood: the agent answers another TaskProlog', { agent: rig.agentErr().slice(-2000) });
  // Forty processes asking twice each: the task queue is full of them, the Prolog's is not; a TaskProlog that finds
  // no room is left to gdrgate.
  await flood(40, 2);
  t.equal(prolog('802'), 0, 'during a flood from many processes: the agent answers the Prolog', { agent: rig.agentErr().slice(-2000) });
  t.equal(await task('802'), 0, 'and another job\'s TaskProlog (its own FIFO and queue)', { agent: rig.agentErr().slice(-2000) });
  });
}
