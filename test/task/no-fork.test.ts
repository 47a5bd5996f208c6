// A step's first TaskProlog answered by the agent starts no process (slurm/taskprolog.sh reads the view with bash
// builtins, locks with noclobber, asks through the agent's FIFO): counted with strace -f on the real wrapper, its
// settings written in as the package does (no .conf, so no stat(1) for the .conf's trust), run as the job's user.
// A later task of the same view starts none either; the same first task with AGENT= starts the gate (Node).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startRig, USER } from './_agent-rig.js';

const STRACE = '/usr/bin/strace';
const probe = spawnSync(STRACE, ['-f', '-qq', '-o', '/dev/null', '/bin/true']);

if (process.getuid?.() !== 0) t.skip('TaskProlog fork count: needs root (the job runs as another uid)', () => {});
else if (probe.error || probe.status !== 0) t.skip(`strace cannot trace here: ${probe.error?.message ?? probe.stderr.toString().trim()}`, () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  const baked = (agent: string): string => {
    let text = fs.readFileSync(rig.wrapper, 'utf8');
    for (const [k, v] of Object.entries({ NODE: rig.node, CLI: rig.cli, BLOB: '', CONFIG: rig.config, ROOT: rig.tree, STATE: rig.stateDir, AGENT: agent, AGENT_TIMEOUT: '30' })) text = text.replace(new RegExp(`^${k}=.*$`, 'm'), `${k}=${v}`);
    const file = path.join(rig.work, `taskprolog-${agent ? 'agent' : 'gate'}.sh`);
    fs.writeFileSync(file, text, { mode: 0o755 });
    return file;
  };
  const out = path.join(rig.work, 'strace.out');
  /** The clone/fork calls of the wrapper's own process (its pid: the first line's), and its stdout. */
  const forks = (wrapper: string, step: string, local: string): { calls: string[]; stdout: string; code: number | null } => {
    fs.writeFileSync(out, '');
    fs.chmodSync(out, 0o666);
    const r = spawnSync('/usr/bin/env', ['-u', 'NODE_OPTIONS', STRACE, '-f', '-qq', '-o', out, '-e', 'trace=clone,clone3,fork,vfork', wrapper], {
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin', SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: '900', SLURM_JOB_GPUS: '0,1', SLURM_STEP_ID: step, SLURM_LOCALID: local },
      cwd: '/',
      uid: USER,
      gid: USER,
      timeout: 120_000,
    });
    const lines = fs.readFileSync(out, 'utf8').split('\n').filter(Boolean);
    const pid = lines[0]?.split(' ')[0];
    return { calls: lines.filter((l) => l.startsWith(`${pid} `) && /^\d+ +(clone3?|fork|vfork)\(/.test(l)), stdout: r.stdout, code: r.status };
  };
  await t.test('the agent path forks nothing; AGENT= starts the gate', async (t) => {
  t.equal(rig.prolog('900', '0,1'), 0, 'the Prolog handed job 900 to the job user');
  const agent = baked('1');
  const first = forks(agent, '0', '0');
  t.same({ calls: first.calls, code: first.code }, { calls: [], code: 0 }, 'the first task of step 0: no process started', { agentErr: rig.agentErr() });
  // (The agent's log line is written after its answer: looked for until it is there, at most 10 s.)
  const answered = (): number => rig.agentErr().split('\n').filter((l) => l.includes('"job":"900"') && l.includes('TaskProlog answered')).length;
  for (const until = performance.now() + 10_000; answered() === 0 && performance.now() < until; ) await new Promise((r) => setTimeout(r, 50));
  t.equal(answered(), 1, 'answered by the agent');
  const later = forks(agent, '0', '1');
  t.same({ calls: later.calls, code: later.code }, { calls: [], code: 0 }, 'a later task of step 0: none either');
  const gate = forks(baked(''), '1', '0');
  t.equal(gate.code, 0);
  t.ok(gate.calls.length >= 1, `AGENT= : gdrgate judges the first task of step 1 (${gate.calls.length} clone/fork calls, the gate's Node among them)`);
  });
}
