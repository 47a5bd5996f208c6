// slurm/taskprolog.sh: settings from the .conf beside it, and the exit-code policy (a non-zero TaskProlog
// fails the task: only a finding under FAIL=1 may do that, never a broken tool).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

import path from 'node:path';
import t from 'tap';
import { taskWrapperDir } from './_wrapper-dir.js';

// A stand-in for node + cli.js: prints its arguments as a TaskProlog line, writes $RC into the wrapper's verdict pipe
// as gdrgate does (src/host/verdict.ts; not with NOVERDICT=1: Node's own exit) and exits with $RC.
const { dir, wrapper, fake } = taskWrapperDir('gdrgate-taskwrap-', () => '#!/bin/sh\necho "print args: $*"\n[ -z "${GDRGATE_VERDICT_FD-}" ] || [ "${NOVERDICT-}" = 1 ] || echo "${RC:-0}" >"/proc/self/fd/$GDRGATE_VERDICT_FD"\nexit "${RC:-0}"\n');

function run(conf: string, rc: number, noVerdict = false): { code: number | null; stdout: string; stderr: string } {
  fs.writeFileSync(path.join(dir, 'gdrgate-taskprolog.conf'), `NODE=/bin/sh\nCLI=${fake}\nCONFIG=/etc/x.json\nLOGGER=\n${conf}`);
  const env = { PATH: '/usr/bin:/bin', RC: String(rc), ...(noVerdict ? { NOVERDICT: '1' } : {}) };
  const r = spawnSync(wrapper, [], { encoding: 'utf8', env, cwd: '/' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test('arguments from the .conf', async (t) => {
  t.equal(run('', 0).stdout, 'print args: task --config /etc/x.json\n', 'defaults');
  t.equal(run('ROOT=/tmp/view\nFAIL=1\n', 0).stdout, 'print args: task --config /etc/x.json --root /tmp/view --fail\n', 'ROOT and FAIL');
});

t.test('exit codes', async (t) => {
  t.equal(run('', 0).code, 0, '0 → 0');
  t.equal(run('', 1).code, 0, 'a finding without FAIL=1 → 0');
  t.equal(run('FAIL=1\n', 1).code, 1, 'a finding with FAIL=1 → 1 (the task fails)');
  for (const rc of [2, 3]) {
    const r = run('FAIL=1\n', rc);
    t.same({ code: r.code, stderr: r.stderr }, { code: 0, stderr: `gdrgate taskprolog: gdrgate exited ${rc}; letting the task run\n` }, `gdrgate exit ${rc} (usage, internal) → 0 even with FAIL=1`);
  }
  // Exits gdrgate did not write (a crash; Node's own 1 for a program missing or cut short) fail no task.
  for (const rc of [134, 1]) {
    const r = run('FAIL=1\n', rc, true);
    t.same({ code: r.code, stderr: r.stderr }, { code: 0, stderr: 'gdrgate taskprolog: /bin/sh ended without a verdict (an exit gdrgate did not write); letting the task run\n' }, `exit ${rc} without a verdict → 0 even with FAIL=1`);
  }
});

// The first task of a view with the job's directory (the path every task takes under Slurm) judges in a command
// substitution: its pipe must be that subshell's own, so a verdict there is one too.
t.test("the first task of a view (judged in a subshell, the answer kept): Node's own exit is no verdict there either", async (t) => {
  const state = path.join(dir, 'state');
  const said = (rc: number, noVerdict: boolean): { code: number | null; stderr: string } => {
    fs.rmSync(state, { recursive: true, force: true });
    fs.mkdirSync(path.join(state, 'job-7'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(dir, 'gdrgate-taskprolog.conf'), `NODE=/bin/sh\nCLI=${fake}\nCONFIG=/etc/x.json\nLOGGER=\nBLOB=\nAGENT=\nFAIL=1\nSTATE=${state}\n`);
    const env = { PATH: '/usr/bin:/bin', RC: String(rc), SLURM_JOB_ID: '7', SLURM_STEP_ID: '0', SLURM_LOCALID: '0', ...(noVerdict ? { NOVERDICT: '1' } : {}) };
    const r = spawnSync(wrapper, [], { encoding: 'utf8', env, cwd: '/' });
    return { code: r.status, stderr: r.stderr };
  };
  t.same(said(1, false), { code: 1, stderr: '' }, "gdrgate's finding under FAIL=1 fails the task");
  t.same(said(1, true), { code: 0, stderr: 'gdrgate taskprolog: /bin/sh ended without a verdict (an exit gdrgate did not write); letting the task run\n' }, "Node's own exit 1 fails no task");
  t.same(said(0, true), { code: 0, stderr: 'gdrgate taskprolog: /bin/sh ended without a verdict (an exit gdrgate did not write); letting the task run\n' }, "Node's own exit 0 (an empty program) is said");
});
