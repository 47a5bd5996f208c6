// A job's user may write any TaskProlog request into their job's FIFO, naming any process: the agent writes into a process's pipe only once the request is proven to come from that process (the nonce of the facts its user wrote into the job's directory), never a line into a root process's or another user's pipe.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startRig, USER } from '../task/_agent-rig.js';

const OTHER = 4246;
const NONCE = '0123456789abcdef0123456789abcdef';

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the requests come from another uid)', () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  await t.test('requests naming processes that did not ask', async (t) => {
    t.equal(rig.prolog('900'), 0, 'prolog: job 900 is USER\'s');
    // Listeners: a process holding a pipe at fd 87 that writes down every line it reads there; root's, another
    // user's, and the job user's own (which wrote no facts: it did not ask).
    const listen = (uid: number, name: string): { pid: number; got: () => string } => {
      const out = path.join(rig.work, `got-${name}`);
      fs.writeFileSync(out, '');
      fs.chownSync(out, uid, uid);
      const p = spawn('/bin/bash', ['-c', `exec 87<<<'' && exec 87<>/proc/$$/fd/87 && read -r -u 87 _ && echo ready && while read -r -u 87 l; do printf '%s\\n' "$l" >>"$1"; done`, 'listen', out], { uid, gid: uid, stdio: ['ignore', 'pipe', 'inherit'] });
      t.teardown(() => void p.kill('SIGKILL'));
      return { pid: p.pid!, got: () => fs.readFileSync(out, 'utf8') };
    };
    const victims = { root: listen(0, 'root'), other: listen(OTHER, 'other'), user: listen(USER, 'user') };
    await new Promise((r) => setTimeout(r, 200));
    for (const v of Object.values(victims)) for (let i = 0; i < 600 && !fs.readFileSync(`/proc/${v.pid}/status`, 'utf8').includes('State:\tS'); i++) await new Promise((r) => setTimeout(r, 50));
    // USER writes requests naming each (no job, USER's job, another job; a config that is not the agent's).
    const lines = Object.values(victims).flatMap((v) => [
      `v1 task 1 ${v.pid} 87 1 ${NONCE} ${rig.config}`,
      `v1 task 900 ${v.pid} 87 1 ${NONCE} ${rig.config}`,
      `v1 task 900 ${v.pid} 87 1 ${NONCE} /x;id`,
    ]);
    const w = spawnSync('/bin/bash', ['-c', 'printf "%s\\n" "${@:2}" >"$1"', 'ask', path.join(rig.stateDir, 'tasks-900'), ...lines], { uid: USER, gid: USER });
    t.equal(w.status, 0, 'requests written');
    // A TaskProlog of USER's that the agent answers: its request came after theirs, in the job's queue.
    rig.conf(true);
    const before = rig.runs();
    const r = await rig.task({ SLURM_JOB_ID: '900', SLURM_STEP_ID: '0' });
    t.equal(r.code, 0, 'the TaskProlog passes');
    t.equal(rig.runs() - before, 0, 'the agent answered the TaskProlog that asked');
    for (const [name, v] of Object.entries(victims)) t.equal(v.got(), '', `nothing written into the ${name} process's pipe`);
  });
}
