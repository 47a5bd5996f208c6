// The Prolog the agent answers starts no process: slurm/prolog.sh (bash 5.1+) gets its reply pipe from a here-string
// and writes its request itself. Counted with strace -f on the real wrapper under a stand-in slurmd, its settings
// written into it as the package writes them (a .conf costs one /usr/bin/stat: its owner and mode): the wrapper's own
// clone/fork calls, none when answered, and some (the gate's Node, the blob's check) when it judges in process.
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { makeGateEnv, type GateEnv } from '../helpers/gate-env.js';
import { CLI, REPO } from '../helpers/paths.js';
import { agentRuns, healthyRun, JOB, lastRun, maskedRun, slurmdShim, startAgent } from './_agent.js';

const STRACE = '/usr/bin/strace';

/** The wrapper's own process (the one that execve'd `script`): its calls that make a process, one line each. */
function forksOf(trace: string, script: string): string[] {
  const lines = trace.split('\n');
  const pid = lines.find((l) => /^\d+ +execve\(/.test(l) && l.includes(`"${script}"`))?.split(/\s+/)[0];
  if (!pid) throw new Error(`no execve of ${script} in the trace`);
  return lines.filter((l) => l.startsWith(`${pid} `) && /^\d+ +(clone3?|fork|vfork)\(/.test(l)).map((l) => l.replace(/^\d+ +/, ''));
}

function traced(dir: string, script: string, job: string): { code: number | null; forks: string[] } {
  const out = path.join(dir, `trace.${job}`);
  const r = spawnSync(STRACE, ['-f', '-qq', '-o', out, '-e', 'trace=clone,clone3,fork,vfork,execve', slurmdShim(dir), script], { encoding: 'utf8', env: { ...JOB, SLURM_JOB_ID: job }, cwd: '/', timeout: 60_000 });
  if (r.error) throw r.error;
  return { code: r.status, forks: forksOf(readFileSync(out, 'utf8'), script) };
}

/** slurm/prolog.sh with its settings in its own lines (scripts/package.mjs setVars), no .conf: its path. */
function bake(e: GateEnv, agent: string, name: string, edit: (text: string) => string = (x) => x): string {
  const vars: Record<string, string> = { NODE: process.execPath, CLI, CONFIG: e.config, AGENT: agent, AGENT_TIMEOUT: '20' };
  let text = readFileSync(path.join(REPO, 'slurm/prolog.sh'), 'utf8');
  for (const [k, v] of Object.entries(vars)) {
    const re = new RegExp(`^${k}=.*$`, 'm');
    if (!re.test(text)) throw new Error(`slurm/prolog.sh: no ${k}= line`);
    text = text.replace(re, `${k}=${v}`);
  }
  const file = path.join(e.dir, name);
  writeFileSync(file, edit(text));
  chmodSync(file, 0o755);
  return file;
}

const probe = spawnSync(STRACE, ['-f', '-qq', '-o', '/dev/null', '/bin/true']);
const cannot = probe.error || probe.status !== 0 ? `strace cannot trace here: ${probe.error?.message ?? probe.stderr.toString().trim()}` : null;
if (cannot) t.skip(cannot, () => {});
else t.test('answered by the agent: the wrapper forks nothing; judged in process: the same count sees the gate start', async (t) => {
  const e = makeGateEnv();
  const a = await startAgent(e);
  t.teardown(() => void a.proc.kill('SIGKILL'));
  const script = bake(e, a.dir, 'prolog.sh');

  const answered = traced(e.dir, script, '51');
  t.equal(answered.code, 0);
  t.same(maskedRun((await agentRuns(e, '51')).at(-1), 'client'), healthyRun('51', 'agent', { pid: a.proc.pid, client: '<client>' }), 'answered by the agent');
  t.same(answered.forks, [], 'the wrapper made no process');

  // A bash before 5.1 makes a here-string a file, not a pipe, as this bash does under BASH_COMPAT=50: the wrapper then
  // takes a process substitution's pipe instead.
  const older = bake(e, a.dir, 'prolog-old-bash.sh', (text) => text.replace(/^#!\/bin\/bash\n/, '#!/bin/bash\nBASH_COMPAT=50\n'));
  t.equal(readFileSync(older, 'utf8').split('\n')[1], 'BASH_COMPAT=50', 'the wrapper behaves as a bash 5.0');
  const old = traced(e.dir, older, '53');
  t.equal(old.code, 0);
  t.same(maskedRun((await agentRuns(e, '53')).at(-1), 'client'), healthyRun('53', 'agent', { pid: a.proc.pid, client: '<client>' }), 'as on an older bash: answered by the agent');
  t.equal(old.forks.length, 1, 'through one process, its process substitution');

  a.proc.kill('SIGKILL');
  await a.exited;
  const alone = traced(e.dir, script, '52');
  t.equal(alone.code, 0);
  t.same(maskedRun(lastRun(e), 'pid'), healthyRun('52', 'snapshot', { pid: '<pid>' }), 'judged in process');
  t.ok(alone.forks.length >= 1, `the same count sees the gate's own processes (${alone.forks.length})`);
});
