// slurm/taskprolog.sh's hard bound: Slurm gives a TaskProlog no time limit, so a gate blocked in a read (a FIFO, a hung
// mount) or looping held the job's task back for ever. Node now runs under /usr/bin/timeout, killed HARD_TIMEOUT
// seconds after the judgment first started it; the task then runs (even under FAIL=1), said once by the task that
// judged; a blob run so killed is not followed by the plain program; a view's other tasks take the kept answer and
// say nothing. A gate that ends in time keeps its verdict. The stand-in for Node: test/slurm/_wrap.ts's (RC=hang).
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { scratchDir } from '../helpers/scratch.js';
import { wrapperKit } from '../slurm/_wrap.js';

if (process.getuid?.() !== 0) {
  t.skip('the hard bound: the wrappers read only root-owned settings files, so this runs as root', () => {});
} else {
  const dir = scratchDir('gdrgate-taskhard-');
  const { base, install, conf, run, timedRun, underTimeout } = wrapperKit(dir);
  const file = install('taskprolog', path.join(dir, 'hard/gdrgate-taskprolog.sh'), false);
  const settings = (extra: string): void => conf(path.join(dir, 'hard/gdrgate-taskprolog.conf'), `${base}LOGGER=\nSTATE=\nFAIL=1\n${extra}`);
  const ENV = { SLURMD_NODENAME: 'vm' };
  const ARGS = 'args: task --config /etc/gdrgate/config.json --fail\n';
  const killedAt = (s: number, node = '/bin/sh'): string => `gdrgate taskprolog: ${node} killed at the hard bound, ${s}s after the gate started, without a verdict; letting the task run\n`;

  t.test('a gate that never ends: killed at the bound, the task runs (FAIL=1 too) and it is said', async (t) => {
    settings('HARD_TIMEOUT=2\n');
    const { r, s } = timedRun(file, { ...ENV, RC: 'hang' });
    t.same(r, { code: 0, stdout: ARGS, stderr: killedAt(2) });
    t.ok(s >= 1 && s < 25, `ended after ${s.toFixed(1)} s: at the bound, not the stand-in's 30 s sleep`);
  });

  t.test("the first task of a view killed at the bound: kept, and the view's next task says nothing and starts no Node", async (t) => {
    const state = path.join(dir, 'state');
    rmSync(state, { recursive: true, force: true });
    mkdirSync(path.join(state, 'job-9'), { recursive: true, mode: 0o700 });
    settings(`HARD_TIMEOUT=2\nSTATE=${state}\n`);
    const env = { ...ENV, RC: 'hang', SLURM_JOB_ID: '9', SLURM_STEP_ID: '0', SLURM_LOCALID: '0' };
    // (A view's answer is printed as the gate's lines only, print and NCCL_TOPO_FILE's export: the stand-in's `args:`
    // line is none, as Slurm would drop it too.)
    t.same(run(file, env, undefined, 30_000), { code: 0, stdout: '', stderr: killedAt(2) }, 'the first task');
    // A judgment again would be killed at the bound again, and say so: the kept answer's task says nothing.
    t.same(run(file, env, undefined, 30_000), { code: 0, stdout: '', stderr: '' }, 'the next: the kept answer');
    t.same(readdirSync(path.join(state, 'job-9')).filter((f) => f.startsWith('task.')).length, 3, 'one view kept: its answer, .done and .lock');
  });

  t.test('a blob run killed at the bound: the plain program is not started after it', async (t) => {
    const node = path.join(dir, 'hard/node');
    writeFileSync(node, '#!/bin/sh\n[ "$1" = --snapshot-blob ] || exec /bin/sh "$@"\nexec /bin/sleep 30\n', { mode: 0o755 });
    writeFileSync(path.join(dir, 'hard/gate.blob'), 'blob\n', { mode: 0o644 });
    settings(`NODE=${node}\nBLOB=${path.join(dir, 'hard/gate.blob')}\nHARD_TIMEOUT=2\n`);
    t.same(run(file, ENV, undefined, 30_000), { code: 0, stdout: '', stderr: killedAt(2, node) });
  });

  t.test('in time, under the bound (default 15 s): the verdict as before; HARD_TIMEOUT=0: unbounded', async (t) => {
    settings('');
    t.same(run(file, { ...ENV, RC: '1', PARENT: '1' }), { code: 1, stdout: `${ARGS}parent: timeout\n`, stderr: '' }, "a finding under FAIL=1 fails the task");
    t.same(run(file, { ...ENV, RC: '0', PARENT: '1' }), { code: 0, stdout: `${ARGS}parent: timeout\n`, stderr: '' }, 'a pass');
    const parent = (v: string): string => {
      settings(`HARD_TIMEOUT=${v}\n`);
      return run(file, { ...ENV, PARENT: '1' }).stdout.split('\n')[1]!;
    };
    t.same(['0', '', '1x', '15'].map((v) => [v, parent(v)]), [['0', 'parent: gdrgate-taskpro'], ['', 'parent: gdrgate-taskpro'], ['1x', 'parent: timeout'], ['15', 'parent: timeout']]);
  });

  t.test('killed before the bound (the OOM killer): no verdict, said as before', async (t) => {
    settings('');
    t.same(run(file, { ...ENV, RC: 'kill' }), { code: 0, stdout: ARGS, stderr: 'gdrgate taskprolog: /bin/sh ended without a verdict (an exit gdrgate did not write); letting the task run\n' });
  });

  t.test('a timeout that fails itself: the gate once more without it, and its verdict stands', { skip: existsSync('/usr/bin/unshare') ? false : 'needs unshare' }, async (t) => {
    const broken = path.join(dir, 'hard/broken-timeout');
    writeFileSync(broken, '#!/bin/sh\nexit 125\n', { mode: 0o755 });
    settings('');
    const r = underTimeout(broken, file, { ...ENV, RC: '1' });
    t.same(r, { code: 1, stdout: ARGS, stderr: '' });
  });
}
