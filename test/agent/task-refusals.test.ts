// Who the agent answers for a TaskProlog (src/agent/task.ts): any user can write a request line, so the request is
// parsed strictly, and the agent judges only facts the job's user wrote into the job's directory, for a process of
// that user, with the nonce of those facts; everything else is "fallback" with its reason, and nothing is judged.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { answerTask, formatTaskReply, parseTaskRequest } from '../../src/agent/task.js';
import { FsHost } from '../../src/host/fs-host.js';
import { parseFacts } from '../../src/task/facts.js';
import { scratchDir } from '../helpers/scratch.js';

const USER = 4244;
const NONCE = '0123456789abcdef0123456789abcdef';

t.test('request lines', async (t) => {
  const ok = parseTaskRequest(`v1 task 77 1234 87 42 ${NONCE} /etc/gdrgate/config.json`);
  t.same(ok, { ok: true, value: { job: '77', pid: 1234, fd: 87, view: '42', nonce: NONCE, config: '/etc/gdrgate/config.json' } });
  const bad: Record<string, string> = {
    'v2 prolog 1 87 /c': 'want "v1 task <job> <pid> <fd> <view> <nonce> <config>"',
    [`v1 task ../x 1 87 42 ${NONCE} /c`]: 'job "../x" is not a job id',
    [`v1 task 77 0 87 42 ${NONCE} /c`]: 'not a process id',
    [`v1 task 77 1 2 42 ${NONCE} /c`]: 'not a reply descriptor',
    [`v1 task 77 1 87 4/2 ${NONCE} /c`]: 'not a view name',
    [`v1 task 77 1 87 a..b ${NONCE} /c`]: 'not a view name',
    'v1 task 77 1 87 42 XYZ /c': 'not a nonce',
    [`v1 task 77 1 87 42 ${NONCE} c`]: 'config is not an absolute path',
    [`v1 task 77 1 87 42 ${NONCE} /c\u0007`]: 'config holds a space or a control character',
    [`v1 task 77 1 87 42 ${NONCE} /${'é'.repeat(2030)}`]: 'request of 4113 bytes',
  };
  for (const [line, error] of Object.entries(bad)) t.same(parseTaskRequest(line), { ok: false, error }, line);
  t.equal(formatTaskReply(NONCE, { ok: false, why: 'a\nb' }), `fallback ${NONCE} a b\n`, 'a reason is one line');
  t.equal(formatTaskReply(NONCE, { ok: true, code: 0, lines: ['print x'], record: null }), `ok ${NONCE} 0 1 ${10 + 37}\nprint x\n-\nend ${NONCE}\n`);
});

t.test('facts that are not whole are not facts', async (t) => {
  const head = `gdrgate-task-facts 1 ${NONCE} 5 1000 0\nroot\t/\n`;
  t.equal(parseFacts(head + 'end\n').ok, true);
  const bad: Record<string, string> = {
    [head]: 'the facts are cut short (no end line)',
    [head + 'list\t/dev\t3\n\ta\n\tb\nend\n']: 'line 3: /dev: a line of its list does not start with a tab',
    [head + 'list\t/dev\t1\n\t..\nend\n']: 'line 3: /dev: an entry that is no file name',
    [head + 'list\t/dev\t1\n\tinfiniband/uverbs0\nend\n']: 'line 3: /dev: an entry that is no file name',
    [head + 'kind\t/dev/x\tfile\nkind\t/dev/x\tdir\nend\n']: 'line 4: a malformed or repeated kind record',
    [head + 'access\t/dev/x\tdenied\nend\n']: 'line 3: a malformed or repeated access record',
    [`gdrgate-task-facts 1 ${NONCE} 5 1000 0\nend\n`]: 'no root record',
  };
  for (const [text, error] of Object.entries(bad)) t.same(parseFacts(text), { ok: false, error }, JSON.stringify(text.slice(head.length)));
  // A tab in the job's own value is part of it (split there, the agent refused the facts and the task waited 1 s).
  const tab = parseFacts(head + 'env\tNCCL_TOPO_FILE\t/home/u/my\ttopo.xml\nenv\tSLURM_STEP_GPUS\nend\n');
  t.strictSame(tab.ok && [tab.value.env.get('NCCL_TOPO_FILE'), tab.value.env.get('SLURM_STEP_GPUS'), tab.value.env.has('SLURM_STEP_GPUS')], ['/home/u/my\ttopo.xml', undefined, true]);
});

if (process.getuid?.() !== 0) t.skip('who is answered: needs root (a job directory of another uid, that uid\'s process)', () => {});
else
  t.test('who is answered', async (t) => {
    const work = scratchDir('gdrgate-taskref-', '/tmp');
    fs.chmodSync(work, 0o755);
    const stateDir = path.join(work, 'run');
    const config = path.join(work, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ baseline: path.join(work, 'none.json'), stateDir }));
    const dir = path.join(stateDir, 'job-77');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.chownSync(dir, USER, USER);
    // A process of the job's user, and one of root's.
    const user = spawn('/bin/sleep', ['30'], { uid: USER, gid: USER });
    const rootProc = spawn('/bin/sleep', ['30']);
    t.teardown(() => {
      user.kill();
      rootProc.kill();
      fs.rmSync(work, { recursive: true, force: true });
    });
    const facts = (pid: number, nonce = NONCE): string => `gdrgate-task-facts 1 ${nonce} ${pid} ${USER} 0\nroot\t/\nend\n`;
    const ask = (pid: number, o: { nonce?: string; config?: string } = {}) =>
      answerTask({ job: '77', pid, fd: 87, view: '42', nonce: o.nonce ?? NONCE, config: o.config ?? config }, config, new FsHost('/'));
    const file = path.join(dir, 'task.42.facts');

    // Until the facts prove the request, a refusal is silent: nothing is written into the process it names.
    fs.writeFileSync(file, facts(user.pid!));
    t.same(await ask(user.pid!), { ok: false, why: `${file} is owned by uid 0, not ${USER}`, silent: true }, 'facts not written by the job user (root made this file)');
    fs.chownSync(file, USER, USER);
    t.same(await ask(user.pid!, { config: '/etc/other.json' }), { ok: false, why: `the agent answers for ${config}, not /etc/other.json` });
    t.same(await ask(rootProc.pid!), { ok: false, why: `pid ${rootProc.pid} is not the job's user's (uid ${USER})`, silent: true }, 'an answer only into the job user\'s process');
    t.same(await ask(user.pid!, { nonce: 'ffffffffffffffffffffffffffffffff' }), { ok: false, why: 'task.42.facts is not this request\'s', silent: true }, 'another nonce');
    t.same(await ask(user.pid!, { nonce: 'ffffffffffffffffffffffffffffffff', config: '/etc/other.json' }), { ok: false, why: 'task.42.facts is not this request\'s', silent: true }, 'another nonce and config');
    fs.writeFileSync(file, facts(user.pid! + 1));
    t.same(await ask(user.pid!), { ok: false, why: 'task.42.facts is not this request\'s', silent: true }, 'facts of another process');
    fs.rmSync(file);
    fs.symlinkSync(config, file);
    const linked = await ask(user.pid!);
    t.equal(linked.ok, false, 'a link in place of the facts is not followed');
    fs.rmSync(file);
    fs.writeFileSync(file, facts(user.pid!));
    fs.chownSync(file, USER, USER);
    t.same(await ask(user.pid!), { ok: false, why: `not among the TaskProlog's facts: readability of ${config}` }, 'facts that say nothing: not judged');
    fs.writeFileSync(file, facts(user.pid!).replace('end\n', `readable\t${config}\t0\nend\n`));
    t.same(await ask(user.pid!), { ok: false, why: `the job's user cannot read ${config}` }, 'a config the job user cannot read: gdrgate judges');
    fs.chownSync(dir, 0, 0);
    t.same(await ask(user.pid!), { ok: false, why: `${dir} is root's: the Prolog has not handed it to the job's user`, silent: true });
  });
