// A mount table that cannot be read is "could not tell", never "no mounts": root enters no job directory then. Each
// place that looks for a job user's mounts (a FUSE file system on their directory, whose daemon would answer root's
// every lstat) read an unreadable /proc/self/mountinfo as an empty table and went in: it removed the directory, and
// read task.json through whatever was mounted there. Run in a mount namespace without /proc (root only).
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { scratchDir } from '../helpers/scratch.js';

const UNSHARE = '/usr/bin/unshare';
const REPO = path.resolve(import.meta.dirname, '../..');
const skip = process.getuid?.() !== 0 ? 'unshare --mount: root only' : !existsSync(UNSHARE) ? `no ${UNSHARE}` : false;

t.test('without a readable mount table the job directory is neither entered nor removed', { skip }, (t) => {
  const stateDir = path.join(scratchDir('gdrgate-mount-unread-'), 'run');
  mkdirSync(stateDir, { mode: 0o711 });
  const dir = path.join(stateDir, 'job-7');
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(path.join(dir, 'task.json'), '{}\n');
  chownSync(dir, 1000, 1000);
  const node = [process.execPath, '--experimental-transform-types', '--disable-warning=ExperimentalWarning', '--import=./test/helpers/ts-resolve.mjs', 'test/state/_mount-unread.ts', stateDir, '7'];
  const r = spawnSync(UNSHARE, ['--mount', '--propagation', 'private', '/bin/sh', '-c', 'umount -l /proc && exec "$@"', 'sh', ...node], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { remove: unknown; collect: unknown };
  const why = `/proc/self/mountinfo could not be read (ENOENT): which paths below ${stateDir} are mounts cannot be told, none is entered`;
  t.same(out.remove, { ok: false, why, setAside: null }, 'removeJobDir');
  t.same(out.collect, { job: '7', ownerUid: null, task: null, taskWhy: why, removed: false, error: `${dir} not entered, not removed: ${why}`, reclaimed: null }, 'collectJobState');
  t.same(readdirSync(stateDir), ['job-7'], 'the directory left where it was, nothing set aside');
  t.equal(statSync(dir).uid, 1000, 'not taken back either');
  t.same(readdirSync(dir), ['task.json']);
  t.end();
});
