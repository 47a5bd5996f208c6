// An answer goes only to the Prolog that asked: a Prolog's pid reused by a later Prolog while the agent judges never gets the earlier job's answer.
//
// Prolog A asks, the agent takes its request and starts judging (stopped there by strace, as a slow check would hold
// it), A stops waiting (closes its reply pipe) and its pid comes to a new Prolog, B: here A execs slurm/prolog.sh
// for another job, which keeps the pid as a reused one would. B holds a pipe on descriptor 87 too, so the agent, once
// it goes on, saw "a pipe" and wrote job A's answer into it: B printed it and exited 0, and job B was never judged
// (no run line, no state for its TaskProlog). The agent now writes only into the pipe it found when it took the request.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { makeGateEnv } from '../helpers/gate-env.js';
import { agentRuns, JOB, installWrapper, lines, slurmdShim, startAgent } from '../agent/_agent.js';

const STRACE = '/usr/bin/strace';

const state = (pid: number): string => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0]!;
const tasks = (pid: number): number[] => readdirSync(`/proc/${pid}/task`).map(Number);
const traced = (pid: number): boolean => tasks(pid).every((k) => !/^TracerPid:\s+0$/m.test(readFileSync(`/proc/${pid}/task/${k}/status`, 'utf8')));
const link = (p: string): string => {
  try {
    return readlinkSync(p);
  } catch {
    return '';
  }
};

async function until(what: string, ok: () => boolean): Promise<void> {
  const end = performance.now() + 60_000;
  while (!ok()) {
    if (performance.now() > end) throw new Error(`not within 60 s: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test("a reused pid: the later Prolog never takes the earlier job's answer", async (t) => {
  const probe = spawnSync(STRACE, ['-f', '-qq', '-o', '/dev/null', '/bin/true']);
  if (probe.error || probe.status !== 0) return void t.skip(`strace cannot trace here: ${probe.error?.message ?? probe.stderr.toString().trim()}`, () => undefined);
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const apid = a.proc.pid!;
  // The agent stops itself at its first open of the config, which it reads for each request after the Prolog's
  // environment: it has taken A's request and read job A's environment.
  const st = spawn(STRACE, ['-f', '-qq', '-o', '/dev/null', '-p', String(apid), '-P', e.config, '-e', 'trace=openat', '-e', 'inject=openat:signal=SIGSTOP:when=1'], { stdio: 'ignore' });
  t.teardown(() => void st.kill('SIGKILL'));
  await until('strace holds every thread of the agent', () => traced(apid));

  const wrapper = installWrapper(e, `AGENT=${a.dir}\nAGENT_TIMEOUT=20\n`);
  const pidFile = path.join(e.dir, 'a.pid');
  // Prolog A: asks as slurm/prolog.sh does, stops waiting once the agent holds its request, and its pid goes to B.
  const first = path.join(e.dir, 'prolog-a.sh');
  writeFileSync(
    first,
    `#!/bin/bash
echo $$ > ${pidFile}
exec 87<<<'' && exec 87<>/proc/$$/fd/87 && read -r -u 87 _
printf 'v2 prolog %s 87 %s\\n' "$$" ${e.config} > ${a.dir}/requests
until read -r s </proc/${apid}/stat; s=\${s##*) }; [ "\${s:0:1}" = t ] || [ "\${s:0:1}" = T ]; do read -r -t 0.02 -u 87 _; done
exec 87<&-
SLURM_JOB_ID=5002 exec ${wrapper}
`,
    { mode: 0o755 },
  );
  const b = spawn(slurmdShim(e.dir), [first], { env: { ...JOB, SLURM_JOB_ID: '5001' }, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  b.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const code = new Promise<number | null>((res) => b.on('close', (c) => res(c)));

  await until('the agent stopped in job 5001', () => state(apid) === 't' || state(apid) === 'T');
  await until('A gave its pid to B', () => existsSync(pidFile) && readFileSync(`/proc/${readFileSync(pidFile, 'utf8').trim()}/cmdline`, 'utf8').includes(wrapper));
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  await until("B holds its own reply pipe", () => link(`/proc/${pid}/fd/87`).startsWith('pipe:'));
  st.kill('SIGKILL');
  await new Promise((r) => st.on('exit', r));
  process.kill(apid, 'SIGCONT');

  t.equal(await code, 0, 'B: exit 0');
  const runs = await agentRuns(e, '5002');
  t.same(
    runs.map((r) => `${r.job} ${r.client}`),
    [`5002 ${pid}`],
    "the agent judged job 5002 for B, and logged no run for A's job (A had stopped waiting)",
  );
  const run = lines(e).filter((l) => l.msg === 'gdrgate run');
  t.same(
    run.map((r) => `${r.job} ${r.startup}`),
    ['5002 agent'],
    'no other run',
  );
  t.match(out, /^gdrgate prolog node=vm job=5002 result=healthy exit=0 \d+ms action=none\n$/, "B printed its own job's answer");
});
