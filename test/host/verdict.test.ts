// src/host/verdict.ts: the exit code told into the Slurm wrappers' pipe, only into a pipe, and the descriptor's bounds.
// The child processes hold a socket pair (Node's 'pipe') at the descriptor the wrappers would name and read back what
// arrives; the wrappers' own FIFO is test/slurm/wrapper-hooks.test.ts's.
import { spawnSync } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { takeVerdictFd, tellVerdict, verdictFd } from '../../src/host/verdict.js';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const url = pathToFileURL(path.join(REPO, 'dist/host/verdict.js')).href;
/** A Node child that tells `code` with GDRGATE_VERDICT_FD=`fd`; stdio[3] is a pipe unless `file` is given. */
function child(code: number, fd: string, file?: number): { status: number | null; told: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `const { takeVerdictFd, tellVerdict } = await import(${JSON.stringify(url)}); tellVerdict(${code}, takeVerdictFd());`], {
    env: { GDRGATE_VERDICT_FD: fd },
    stdio: ['ignore', 'pipe', 'pipe', file ?? 'pipe'],
    encoding: 'utf8',
  });
  return { status: r.status, told: file === undefined ? String(r.output[3] ?? '') : '', stderr: r.stderr };
}

t.test('the descriptor: 3 to 1023, digits only', async (t) => {
  t.same(['3', '86', '1023'].map(verdictFd), [3, 86, 1023]);
  t.same([undefined, '', '0', '1', '2', '1024', '03', '8 6', '86\n', '-5', '0x56', '3.0'].map(verdictFd), Array(12).fill(null));
});

t.test('told into a pipe or socket, once, as the code and a newline', async (t) => {
  for (const code of [0, 1, 2, 3]) t.same(child(code, '3'), { status: 0, told: `${code}\n`, stderr: '' }, `code ${code}`);
});

t.test('nothing told where the descriptor is no pipe, or not open, or not named', async (t) => {
  const dir = scratchDir('gdrgate-verdict-');
  const file = path.join(dir, 'not-a-pipe');
  const fd = openSync(file, 'w');
  try {
    t.same(child(1, '3', fd), { status: 0, told: '', stderr: '' }, 'a regular file at the descriptor');
  } finally {
    closeSync(fd);
  }
  t.equal(readFileSync(file, 'utf8'), '', 'the file got nothing');
  t.same(child(1, '9'), { status: 0, told: '', stderr: '' }, 'a descriptor not open: nothing, no error');
  t.same(child(1, ''), { status: 0, told: '', stderr: '' }, 'none named');
  // In this process, without a descriptor: a no-op.
  t.doesNotThrow(() => tellVerdict(1, null));
});

t.test("taken out of the environment: gdrgate's children never see it", async (t) => {
  const env: NodeJS.ProcessEnv = { GDRGATE_VERDICT_FD: '86', OTHER: 'x' };
  t.equal(takeVerdictFd(env), 86);
  t.same(env, { OTHER: 'x' });
  const bad: NodeJS.ProcessEnv = { GDRGATE_VERDICT_FD: '1' };
  t.equal(takeVerdictFd(bad), null, 'stdout is never the pipe');
  t.same(bad, {}, 'and the variable goes all the same');
  // A child Node started by a process that took it: no variable, so nothing told even with the descriptor open.
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `const { takeVerdictFd } = await import(${JSON.stringify(url)}); takeVerdictFd(); const { spawnSync } = await import('node:child_process'); const c = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.env.GDRGATE_VERDICT_FD))'], { encoding: 'utf8' }); process.stdout.write(c.stdout);`], {
    env: { GDRGATE_VERDICT_FD: '3' },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  t.same({ status: r.status, stdout: r.stdout, told: String(r.output[3] ?? '') }, { status: 0, stdout: 'undefined', told: '' });
});
