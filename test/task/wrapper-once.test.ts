// slurm/taskprolog.sh judges once per job, step and view on a node: the first task runs gdrgate and says its print
// lines, the others answer from the job's directory (bash alone: the exit code and the export lines); another view
// (CPUs, GPUs, step) is judged anew and told by its own first task, whichever local task that is; a kept answer whose
// view differs, or a directory that is not the job user's, is never printed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { taskWrapperDir } from './_wrapper-dir.js';

// A stand-in for node + cli.js: counts its runs, takes a while (so tasks overlap), answers two print lines (as gdrgate
// task does, only as local task 0 or outside a step: src/task/hook.ts voice), an export line when EXPORT is set, and $RC.
const { dir, wrapper, fake } = taskWrapperDir(
  'gdrgate-taskonce-',
  (d) =>
    `#!/bin/sh\necho run >> ${path.join(d, 'calls')}\nsleep 0.4\n[ -z "\${NODE_OPTIONS+x}" ] || echo "print leaked NODE_OPTIONS=$NODE_OPTIONS"\nif [ -z "$SLURM_LOCALID" ] || [ "$SLURM_LOCALID" = 0 ]; then echo "print gdrgate: one"; echo "print gdrgate: two"; fi\n[ -z "$EXPORT" ] || echo "export NCCL_TOPO_FILE=/x"\n[ -z "\${GDRGATE_VERDICT_FD-}" ] || echo "\${RC:-0}" >"/proc/self/fd/\$GDRGATE_VERDICT_FD"\nexit "\${RC:-0}"\n`,
);
const calls = path.join(dir, 'calls');
const state = path.join(dir, 'state');
fs.mkdirSync(path.join(state, 'job-77'), { recursive: true, mode: 0o700 });
fs.writeFileSync(path.join(dir, 'gdrgate-taskprolog.conf'), `NODE=/bin/sh\nCLI=${fake}\nCONFIG=/etc/x.json\nSTATE=${state}\nWAIT=30\n`);

type Ran = { code: number | null; stdout: string };
function task(env: Record<string, string>, pre: string[] = []): Promise<Ran> {
  const [cmd, ...args] = [...pre, wrapper];
  const p = spawn(cmd!, args, { env: { PATH: '/usr/bin:/bin', SLURM_JOB_ID: '77', SLURM_STEP_ID: '0', ...env }, cwd: '/' });
  let stdout = '';
  p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  return new Promise((resolve) => p.on('close', (code) => resolve({ code, stdout })));
}
const runs = (): number => (fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean).length : 0);
const ANSWER = 'print gdrgate: one\nprint gdrgate: two\n';

t.test('eight tasks of one step: one judgment, told once, the same exit code for all', async (t) => {
  const all = await Promise.all(Array.from({ length: 8 }, () => task({})));
  t.same(all.map((r) => r.code), Array.from({ length: 8 }, () => 0));
  t.same(all.map((r) => r.stdout).sort(), [...Array.from({ length: 7 }, () => ''), ANSWER], 'the task that judged says it; the others nothing');
  t.equal(runs(), 1, 'gdrgate ran once');
  t.same(await task({}), { code: 0, stdout: '' }, 'a later task of the step: the kept answer, nothing said again');
  t.equal(runs(), 1);
});

t.test('another step, or other CPUs: judged anew', async (t) => {
  t.same(await task({ SLURM_STEP_ID: '1' }), { code: 0, stdout: ANSWER });
  t.equal(runs(), 2, 'step 1 judged');
  t.same(await task({}, ['/usr/bin/taskset', '-c', '0']), { code: 0, stdout: ANSWER });
  t.equal(runs(), 3, 'a task bound to CPU 0 judged');
});

t.test("the exit-code policy holds for the kept answer: FAIL=1 fails every task of the view", async (t) => {
  const conf = path.join(dir, 'gdrgate-taskprolog.conf');
  fs.appendFileSync(conf, 'FAIL=1\n');
  const first = await Promise.all([task({ RC: '1', SLURM_STEP_ID: '5' }), task({ RC: '1', SLURM_STEP_ID: '5' })]);
  t.same(first.map((r) => r.code), [1, 1]);
  t.same(await task({ SLURM_STEP_ID: '5' }), { code: 1, stdout: '' }, 'kept: still exit 1, though this run would say 0');
  t.equal(runs(), 4);
  fs.writeFileSync(conf, fs.readFileSync(conf, 'utf8').replace('FAIL=1\n', ''));
});

t.test('a kept answer for another view is not printed; a directory not the user\'s keeps nothing', async (t) => {
  const kept = fs.readdirSync(path.join(state, 'job-77')).filter((f) => f.startsWith('task.v1_') && !/\.(done|lock|facts)$/.test(f));
  t.equal(kept.length, 4, 'one answer per view');
  for (const f of kept) fs.writeFileSync(path.join(state, 'job-77', f), 'v1 step=9 cpus=x\n0\nprint forged\n');
  const r = await task({});
  t.same(r, { code: 0, stdout: ANSWER }, 'the forged answer names another view: judged again');
  t.equal(runs(), 5);
  fs.rmSync(path.join(state, 'job-77'), { recursive: true });
  fs.symlinkSync(dir, path.join(state, 'job-77'));
  t.same(await task({}), { code: 0, stdout: ANSWER });
  t.same(await task({}), { code: 0, stdout: ANSWER });
  t.equal(runs(), 7, 'a linked job directory: every task judged');
});

t.test('whichever local task judges says the print lines, once; every task the export lines', async (t) => {
  fs.mkdirSync(path.join(state, 'job-78'), { mode: 0o700 });
  const before = runs();
  const as = (localid: string, more: Record<string, string> = {}): Promise<Ran> => task({ SLURM_JOB_ID: '78', SLURM_STEP_ID: '0', SLURM_LOCALID: localid, EXPORT: '1', ...more });
  const EXPORT = 'export NCCL_TOPO_FILE=/x\n';
  t.same(await as('3'), { code: 0, stdout: ANSWER + EXPORT }, 'task 3 judges: it says the view\'s print lines (before: its export line only)');
  t.same(await as('0'), { code: 0, stdout: EXPORT }, 'task 0, from the kept answer: its export line only (before: the print lines, told by task 0 alone)');
  t.same(await as('5'), { code: 0, stdout: EXPORT }, 'task 5: its export line only');
  t.equal(runs() - before, 1, 'judged once');
  // --gpus-per-task: task 1's own view (its own GPUs), which local task 0 does not share: told by task 1 itself.
  t.same(await as('1', { SLURM_STEP_GPUS: '1' }), { code: 0, stdout: ANSWER + EXPORT }, 'before: judged, kept, never said (task 1 is not local task 0)');
  t.equal(runs() - before, 2);
});

t.test("the job's NODE_OPTIONS never reach gdrgate's Node (--inspect-brk would hold the task for ever)", async (t) => {
  fs.mkdirSync(path.join(state, 'job-79'), { mode: 0o700 });
  t.same(await task({ SLURM_JOB_ID: '79', NODE_OPTIONS: '--inspect-brk=127.0.0.1:0', NODE_DEBUG: 'fs' }), { code: 0, stdout: ANSWER });
});

t.test('a view whose key is over 4 KiB (a job-controlled variable) is judged, never hashed nor kept', async (t) => {
  fs.mkdirSync(path.join(state, 'job-80'), { mode: 0o700 });
  const before = runs();
  const huge = { SLURM_JOB_ID: '80', CUDA_VISIBLE_DEVICES: '0,'.repeat(16 * 1024) };
  t.same(await task(huge), { code: 0, stdout: ANSWER });
  t.same(await task(huge), { code: 0, stdout: ANSWER });
  t.equal(runs() - before, 2, 'each task judged');
  t.same(fs.readdirSync(path.join(state, 'job-80')), [], 'nothing kept');
});

t.test('a WAIT that is no whole number (1.5, a CRLF file\'s "30\\r") still waits: one judgment for the view', async (t) => {
  const conf = path.join(dir, 'gdrgate-taskprolog.conf');
  const was = fs.readFileSync(conf, 'utf8');
  let job = 81;
  for (const wait of ['1.5', '30\r', '08']) {
    fs.writeFileSync(conf, was.replace('WAIT=30\n', `WAIT=${wait}\n`));
    fs.mkdirSync(path.join(state, `job-${job}`), { mode: 0o700 });
    const before = runs();
    const two = await Promise.all([task({ SLURM_JOB_ID: String(job) }), task({ SLURM_JOB_ID: String(job) })]);
    t.same(two.map((r) => r.stdout).sort(), ['', ANSWER], `WAIT=${JSON.stringify(wait)}: told once`);
    t.equal(runs() - before, 1, `WAIT=${JSON.stringify(wait)}: judged once (before: the waiting task judged too)`);
    job++;
  }
  fs.writeFileSync(conf, was);
});
