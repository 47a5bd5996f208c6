// The agent's descriptors across many TaskProlog requests (agent/task.ts answerTask, host/held-dir.ts): every way a
// request ends (judged; its facts missing, a link, a FIFO, a directory, a file with its user's dead FUSE file system
// mounted on it; prolog.json under such a mount; the job's directory under one; no directory at all) leaves the
// process with the descriptors it had. The agent is long-lived: one descriptor kept a request and a user's TaskProlog
// loop would run it out of them. Real job directories (the rig's Prolog and TaskProlog), real mounts (helpers/dead-fuse.ts).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { answerTask, type TaskAnswer, type TaskRequest } from '../../src/agent/task.js';
import { FsHost } from '../../src/host/fs-host.js';
import { canMountDeadFuse, deadFuse, type DeadFuse } from '../helpers/dead-fuse.js';
import { factsAgain, startRig, USER } from '../task/_agent-rig.js';

const GUARD_MS = 5000;
const ROUNDS = 25;

/** This process's open descriptors (as the agent's would be counted in /proc/<agent>/fd). */
const fds = (): number => fs.readdirSync('/proc/self/fd').length;

if (!canMountDeadFuse()) t.skip('needs root, /dev/fuse and mount(8) that may mount a FUSE file system here', () => {});
else await t.test('requests of every ending, many times', main);

async function main(t: Test): Promise<void> {
  const rig = await startRig();
  const mounts: DeadFuse[] = [];
  t.teardown(() => (mounts.reverse().forEach((m) => m.release()), rig.close()));
  const mount = (at: string): void => {
    const m = deadFuse(at, USER, { guardMs: GUARD_MS });
    if (m === null) throw new Error(`no dead FUSE on ${at}`);
    mounts.push(m);
  };
  rig.conf(true);
  for (const job of ['620', '621', '622']) {
    t.equal(rig.prolog(job), 0, `prolog ${job}`);
    t.equal((await rig.task({ SLURM_JOB_ID: job, SLURM_STEP_ID: '0' })).code, 0, `the TaskProlog of ${job} ran`);
  }
  const asked = (job: string): { view: string; pid: number; nonce: string } => {
    const { name, proc, nonce } = factsAgain(t, rig.stateDir, job);
    return { view: name.split('.')[1]!, pid: proc.pid!, nonce };
  };
  const j0 = asked('620');
  const j1 = asked('621');
  const j2 = asked('622');
  const dir = (job: string): string => path.join(rig.stateDir, `job-${job}`);
  const own = (p: string): void => fs.lchownSync(p, USER, USER);
  const at = (view: string): string => path.join(dir('620'), `task.${view}.facts`);
  fs.symlinkSync(path.join(dir('620'), `task.${j0.view}.facts`), at('link'));
  own(at('link'));
  t.equal(spawnSync('/usr/bin/mkfifo', [at('fifo')]).status, 0, 'a FIFO for facts');
  own(at('fifo'));
  fs.mkdirSync(at('dir'));
  own(at('dir'));
  fs.writeFileSync(at('mounted'), '');
  own(at('mounted'));
  mount(at('mounted'));
  mount(path.join(dir('621'), 'prolog.json'));
  mount(dir('622'));

  const req = (job: string, who: { view: string; pid: number; nonce: string }, view = who.view): TaskRequest => ({ job, pid: who.pid, fd: 87, view, nonce: who.nonce, config: rig.config });
  const cases: readonly [string, TaskRequest][] = [
    ['judged', req('620', j0)],
    ['facts missing', req('620', j0, 'none')],
    ['facts a link', req('620', j0, 'link')],
    ['facts a FIFO', req('620', j0, 'fifo')],
    ['facts a directory', req('620', j0, 'dir')],
    ['facts under a mount', req('620', j0, 'mounted')],
    ['prolog.json under a mount', req('621', j1)],
    ["the job's directory under a mount", req('622', j2)],
    ['no directory', req('629', j0)],
  ];
  const host = new FsHost('/');
  const ask = (r: TaskRequest): Promise<TaskAnswer> => answerTask(r, rig.config, host);

  await t.test('what each request ends with', async (t) => {
    const got: [string, boolean, string][] = [];
    for (const [what, r] of cases) {
      const a = await ask(r);
      got.push([what, a.ok, a.ok ? `code ${a.code}` : a.why]);
    }
    const d = dir('620');
    t.same(got, [
      ['judged', true, 'code 0'],
      ['facts missing', false, `${d}/task.none.facts: no such file (ENOENT)`],
      ['facts a link', false, `${d}/task.link.facts is not a regular file (a symbolic link)`],
      ['facts a FIFO', false, `${d}/task.fifo.facts is not a regular file`],
      ['facts a directory', false, `${d}/task.dir.facts is not a regular file`],
      ['facts under a mount', false, `${d}/task.mounted.facts is a mount: not entered`],
      ['prolog.json under a mount', false, `${dir('621')}/prolog.json is a mount: not entered`],
      ["the job's directory under a mount", false, `${dir('622')} is a mount: not entered`],
      ['no directory', false, `${dir('629')} is not a directory`],
    ]);
  });

  await t.test(`${ROUNDS} rounds of every request: no descriptor kept`, async (t) => {
    const before = fds();
    for (let i = 0; i < ROUNDS; i++) for (const [, r] of cases) await ask(r);
    t.equal(fds() - before, 0, 'descriptors kept');
  });
}
