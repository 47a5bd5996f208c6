// slurm/taskprolog.sh in a heterogeneous step: slurmstepd gives every component's tasks the leader's SLURM_JOB_ID
// (src/slurmd/slurmstepd/task.c, exec_task: step_id.job_id = het_job_id), while each component's Prolog ran, and keeps
// its record, under the component's own id. On a node of component 1 alone the gate is given that component's id (the
// one SLURM_JOB_ID_HET_GROUP_<n> whose directory is here); with none, two, or the leader's own directory here, the
// task's SLURM_JOB_ID as it is.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { taskWrapperDir } from './_wrapper-dir.js';

// A stand-in for node + cli.js: says which job it was given, and its verdict into the wrapper's pipe.
const { dir, wrapper, fake } = taskWrapperDir('gdrgate-taskhet-', () => '#!/bin/sh\necho "print job=$SLURM_JOB_ID"\n[ -z "${GDRGATE_VERDICT_FD-}" ] || echo 0 >"/proc/self/fd/$GDRGATE_VERDICT_FD"\nexit 0\n', 0o755);
const state = path.join(dir, 'state');
fs.writeFileSync(path.join(dir, 'gdrgate-taskprolog.conf'), `NODE=/bin/sh\nCLI=${fake}\nCONFIG=/etc/x.json\nLOGGER=\nBLOB=\nAGENT=\nSTATE=${state}\n`);
// A het job of three components, 123 (the leader), 124 and 125, as sbatch's environment names them.
const HET = { SLURM_JOB_ID: '123', SLURM_JOB_ID_HET_GROUP_0: '123', SLURM_JOB_ID_HET_GROUP_1: '124', SLURM_JOB_ID_HET_GROUP_2: '125' };

function task(env: Record<string, string>): { code: number | null; out: string } {
  const r = spawnSync(wrapper, [], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', SLURM_STEP_ID: '0', SLURM_LOCALID: '0', ...env }, cwd: '/', timeout: 20_000 });
  return { code: r.status, out: r.stdout + r.stderr };
}
/** This node's job directories (the Prologs that ran here), and nothing else. */
function here(...jobs: string[]): void {
  fs.rmSync(state, { recursive: true, force: true });
  for (const j of jobs) fs.mkdirSync(path.join(state, `job-${j}`), { recursive: true, mode: 0o700 });
}
const kept = (job: string): string[] => fs.readdirSync(path.join(state, `job-${job}`)).filter((f) => f.endsWith('.done'));

t.test("a node of component 1 alone: the component's job, its answer kept in its directory", async (t) => {
  here('124');
  t.strictSame(task(HET), { code: 0, out: 'print job=124\n' });
  t.equal(kept('124').length, 1, "the view's answer kept under job-124");
  t.strictSame(task(HET), { code: 0, out: '' }, 'a later task: the kept answer');
});

t.test("the leader's directory here, two components here, or none: the task's SLURM_JOB_ID as it is", async (t) => {
  here('123', '124');
  t.strictSame(task(HET), { code: 0, out: 'print job=123\n' }, "the leader's");
  here('124', '125');
  t.strictSame(task(HET), { code: 0, out: 'print job=123\n' }, 'two components on this node: which one is not known');
  here();
  t.strictSame(task(HET), { code: 0, out: 'print job=123\n' }, 'no directory at all');
});

t.test('not a het step, or a group id that is no job id: nothing taken from the group variables', async (t) => {
  here('124');
  t.strictSame(task({ ...HET, SLURM_JOB_ID: '124' }), { code: 0, out: 'print job=124\n' }, 'a step of component 1 alone (its own id)');
  t.strictSame(task({ SLURM_JOB_ID: '123', SLURM_JOB_ID_HET_GROUP_1: '124' }), { code: 0, out: 'print job=123\n' }, 'no group 0 naming this job');
  here('x');
  fs.mkdirSync(path.join(state, 'job-../job-x'), { recursive: true });
  t.strictSame(task({ ...HET, SLURM_JOB_ID_HET_GROUP_1: '../job-x' }), { code: 0, out: 'print job=123\n' }, 'a path in a group variable');
});
