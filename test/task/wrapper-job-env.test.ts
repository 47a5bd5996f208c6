// slurm/taskprolog.sh runs as the job's user in the job's environment, and keeps answers in the job's directory: nothing
// of either may make it print a line the gate did not mean (slurmstepd applies every `export`/`unset` line of its
// stdout and stderr to the task) or hold a task for ever. Bash's start-up variables (BASH_ENV, SHELLOPTS with PS4, an
// exported function named like a builtin) are ignored in privileged mode (#!/bin/bash -p); a kept answer is printed
// only as the gate's lines (NCCL_TOPO_FILE's export; its print lines were said by the task that judged) and read only
// from a regular file.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { taskWrapperDir } from './_wrapper-dir.js';

// A stand-in for node + cli.js that answers as gdrgate does: one print line, its verdict into the wrapper's pipe.
const { dir, wrapper, fake } = taskWrapperDir('gdrgate-taskenv-', () => '#!/bin/sh\necho "print gdrgate: judged"\n[ -z "${GDRGATE_VERDICT_FD-}" ] || echo 0 >"/proc/self/fd/$GDRGATE_VERDICT_FD"\nexit 0\n', 0o755);
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const state = path.join(dir, 'state');
fs.writeFileSync(path.join(dir, 'gdrgate-taskprolog.conf'), `NODE=/bin/sh\nCLI=${fake}\nCONFIG=/etc/x.json\nLOGGER=\nBLOB=\nAGENT=\nSTATE=${state}\nHARD_TIMEOUT=5\n`);
const benv = path.join(dir, 'benv.sh');
fs.writeFileSync(benv, 'echo "export LD_PRELOAD=/home/u/evil.so"\n', { mode: 0o644 });
const JOB = { PATH: '/usr/bin:/bin', SLURM_JOB_ID: '7', SLURM_STEP_ID: '0', SLURM_LOCALID: '0' };

function run(extra: Record<string, string> = {}): { code: number | null; out: string[] } {
  const r = spawnSync(wrapper, [], { encoding: 'utf8', env: { ...JOB, ...extra }, cwd: '/', timeout: 20_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}`.split('\n').filter(Boolean) };
}
const fresh = (): void => {
  fs.rmSync(state, { recursive: true, force: true });
  fs.mkdirSync(path.join(state, 'job-7'), { recursive: true, mode: 0o700 });
};

t.test("the job's BASH_ENV, SHELLOPTS=xtrace with PS4, and a function named like a builtin: no line of theirs", async (t) => {
  const hostile: Record<string, Record<string, string>> = {
    BASH_ENV: { BASH_ENV: benv },
    'SHELLOPTS=xtrace, PS4': { SHELLOPTS: 'xtrace', PS4: 'export CUDA_VISIBLE_DEVICES=7 #' },
    'BASH_FUNC_mapfile%%': { 'BASH_FUNC_mapfile%%': '() { echo "unset LD_LIBRARY_PATH"; builtin mapfile "$@"; }' },
    'BASH_FUNC_printf%%': { 'BASH_FUNC_printf%%': '() { echo "export LD_PRELOAD=/x"; builtin printf "$@"; }' },
  };
  for (const [name, env] of Object.entries(hostile)) {
    fresh();
    t.strictSame(run(env), { code: 0, out: ['print gdrgate: judged'] }, `${name}: the first task`);
    t.strictSame(run(env), { code: 0, out: [] }, `${name}: a later task (the kept answer: its print lines said once, by the task that judged)`);
  }
});

t.test("a kept answer the job's user rewrote: only the gate's lines are printed; one that is no regular file is not read", async (t) => {
  fresh();
  t.strictSame(run(), { code: 0, out: ['print gdrgate: judged'] });
  const kept = fs.readdirSync(path.join(state, 'job-7')).filter((n) => n.startsWith('task.') && !n.includes('.done') && !n.endsWith('.lock'));
  t.equal(kept.length, 1, 'one view kept');
  const file = path.join(state, 'job-7', kept[0]!);
  fs.appendFileSync(file, 'export LD_PRELOAD=/home/u/evil.so\nunset PATH\nexport NCCL_TOPO_FILE=/run/gdrgate/job-7/nccl-topo.xml\n');
  t.strictSame(run(), { code: 0, out: ['export NCCL_TOPO_FILE=/run/gdrgate/job-7/nccl-topo.xml'] }, 'the gate\'s export line alone (print lines are said by the task that judged)');
  fs.rmSync(file);
  spawnSync('/usr/bin/mkfifo', [file]);
  const t0 = Date.now();
  const r = run();
  t.strictSame(r, { code: 0, out: ['print gdrgate: judged'] }, 'a FIFO in its place: judged again, never a wait for a writer');
  t.ok(Date.now() - t0 < 15_000, 'not held');
});

t.test("the job's FUNCNEST and TMOUT are not the wrapper's: it judges as without them", async (t) => {
  for (const env of [{ FUNCNEST: '1' }, { FUNCNEST: '2' }, { TMOUT: '0.001' }] as Record<string, string>[]) {
    fresh();
    t.strictSame(run(env), { code: 0, out: ['print gdrgate: judged'] }, JSON.stringify(env));
  }
});
