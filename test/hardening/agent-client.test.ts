// The agent judges only for a Prolog: a root process with slurmd among its ancestors (or, with RunInJob, slurmstepd). A request naming any other
// pid (a root tool's own, a user's process, a pid reused after its Prolog died) goes back as "fallback", and
// nothing is judged, logged or written on its behalf. The requests are written as slurm/prolog.sh writes them.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, readFileSync } from 'node:fs';

import path from 'node:path';
import t, { type Test } from 'tap';
import { makeGateEnv, type GateEnv } from '../helpers/gate-env.js';
import { agentRuns, JOB, lines, slurmdShim, startAgent, stderrShows, type Agent } from '../agent/_agent.js';
import { scratchDir } from '../helpers/scratch.js';

/**
 * As a Prolog asks, but for `pid`: the request line naming its reply pipe (descriptor 87), the answer read from that
 * pipe (or 'timeout'). The process opens its pipe first thing, but a loaded machine may not have run that far yet:
 * the script waits for it (up to 60 s) before it asks.
 */
function ask(a: Agent, e: GateEnv, pid: number): string {
  const script = `for i in $(seq 600); do [ -e /proc/${pid}/fd/87 ] && break; read -r -t 0.1 _ <> <(:); done; exec 3<>/proc/${pid}/fd/87 && printf 'v2 prolog %s 87 %s\\n' ${pid} '${e.config}' 1<>'${a.dir}/requests' && { read -r -t 20 -u 3 v rest && echo "$v $rest" || echo timeout; }`;
  return spawnSync('/bin/bash', ['-c', script], { encoding: 'utf8', timeout: 90_000 }).stdout.trim();
}

/** A sleeping process with the job's environment, optionally under a process named slurmd, optionally as `uid`, holding its reply pipe unless `holds` is false. */
function sleeper(t: Test, e: GateEnv, underSlurmd: boolean, uid?: number, holds = true): ChildProcess {
  // The shim in a directory another user may enter (the gate's test directory is root's, 0700).
  const open = scratchDir('gdrgate-shim-');
  chmodSync(open, 0o755);
  // Holding a pipe on descriptor 87, as a waiting Prolog does (slurm/prolog.sh), then sleeping in the same process.
  const holder = ['/bin/bash', '-c', holds ? 'exec 87<> <(:); exec /bin/sleep 60' : 'exec /bin/sleep 60'];
  const cmd = underSlurmd ? [slurmdShim(open), ...holder] : holder;
  const p = spawn(cmd[0]!, cmd.slice(1), { env: JOB, stdio: 'ignore', ...(uid !== undefined ? { uid, gid: uid } : {}) });
  t.teardown(() => void p.kill('SIGKILL'));
  return p;
}

/** The pid of the shim's child (the sleep), once it is there (a bash start on a loaded machine: up to 60 s). */
async function childOf(parent: number): Promise<number> {
  for (const until = performance.now() + 60_000; performance.now() < until; ) {
    const pid = Number(readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(/\s+/)[0]);
    if (pid > 0) return pid;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`no child of ${parent}`);
}

const agentRunCount = (e: GateEnv): number => lines(e).filter((l) => l.msg === 'gdrgate run' && l.startup === 'agent').length;

t.test('a root process that slurmd did not start: fallback, not judged', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const p = sleeper(t, e, false);
  t.equal(ask(a, e, p.pid!), `fallback pid ${p.pid} has neither slurmd nor slurmstepd among its ancestors: not a Prolog`);
  t.equal(agentRunCount(e), 0, 'no run logged for it');
});

t.test("a user's process under slurmd: fallback, not judged", async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const shim = sleeper(t, e, true, 65534);
  const pid = await childOf(shim.pid!);
  t.match(ask(a, e, pid), new RegExp(`^fallback pid ${pid} is not root's \\(Uid: 65534 65534 65534 65534\\): not a Prolog$`));
  t.equal(agentRunCount(e), 0, 'no run logged for it');
});

t.test('a root process under slurmd, as a Prolog is: judged and answered', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const shim = sleeper(t, e, true);
  const pid = await childOf(shim.pid!);
  t.match(ask(a, e, pid), /^ok gdrgate prolog node=vm job=42 result=healthy exit=0 \d+ms action=none$/);
  t.equal((await agentRuns(e, '42')).length, 1, 'one run logged, after the answer');
});

t.test('a live process that holds no pipe where its request says: dropped, nothing judged', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const shim = sleeper(t, e, true, undefined, false);
  const pid = await childOf(shim.pid!);
  const w = spawnSync('/bin/bash', ['-c', `printf 'v2 prolog %s 87 %s\\n' ${pid} '${e.config}' 1<>'${a.dir}/requests'`]);
  t.equal(w.status, 0);
  const said = (await stderrShows(a, /dropped 1 request/)).split('\n').filter((l) => l.includes('dropped')).map((l) => (JSON.parse(l) as { msg: string; dropped: number }));
  t.same(said, [{ ...said[0], dropped: 1, msg: 'gdrgate agent: dropped 1 request(s): the Prolog stopped waiting before the answer' }], 'one line, for that one request');
  t.ok(existsSync(`/proc/${pid}`), 'the process was alive all along: the request is dropped for its pipe, not for its pid');
  t.equal(agentRunCount(e), 0, 'no run logged for it');
  t.same(e.drainCalls(), []);
});
