// Root taking a job user's directory back (lockDir, lockPathTo: the Epilog before it detaches a user's mount or empties
// the directory) changes the owner and mode of that directory and of nothing else: a name the user swapped for a hard
// link to a file (theirs, or on a node without fs.protected_hardlinks anyone's on the state directory's file system,
// another job's FIFO) or for a symbolic link keeps its file's owner and mode, and the lock is refused. Real files; the
// user is uid 65534.
import { chmodSync, chownSync, lchownSync, linkSync, lstatSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { lockDir, lockPathTo } from '../../src/state/store.js';
import { scratchDir } from '../helpers/scratch.js';
import { thrown } from '../helpers/thrown.js';

const USER = 65534;

/** A state directory (root's, 0711) holding job `id`'s directory, its user's and 0777 as the user may make it. */
function jobDir(id: string): { s: string; dir: string } {
  const top = scratchDir('gdrgate-lock-dir-');
  chmodSync(top, 0o755);
  const s = path.join(top, 'state');
  mkdirSync(s, { mode: 0o711 });
  const dir = path.join(s, `job-${id}`);
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  chownSync(dir, USER, USER);
  return { s, dir };
}

/** A file of the user's (mode 0640) with a second name `at`: a hard link, one inode. */
function linkedFile(dir: string, at: string): string {
  const f = path.join(dir, 'kept');
  writeFileSync(f, 'the user\'s\n', { mode: 0o640 });
  chmodSync(f, 0o640);
  chownSync(f, USER, USER);
  linkSync(f, at);
  return f;
}


const owner = (p: string): string => {
  const st = lstatSync(p);
  return `${st.uid}:${st.gid} ${(st.mode & 0o7777).toString(8)}`;
};

if (process.getuid?.() !== 0) t.skip('needs root (a directory of another uid, taken back)', () => {});
else {
  t.test('a directory: made root\'s and 0700', async (t) => {
    const { dir } = jobDir('5');
    lockDir(dir);
    t.equal(owner(dir), '0:0 700');
  });

  t.test('a hard link to a file where a directory was: refused, the file keeps its owner and mode', async (t) => {
    const { s, dir } = jobDir('6');
    const a = path.join(dir, 'a');
    const f = linkedFile(dir, a);
    // The mount table named job-6/a/m; the user moved job-6/a aside and linked a file at its name before the lock.
    t.equal(thrown(() => lockPathTo(s, path.join(a, 'm'))), `${a} changed type while being locked`);
    t.equal(owner(f), `${USER}:${USER} 640`, 'the file is still the user\'s, its mode as it was');
    t.equal(owner(dir), '0:0 700', 'the job directory above it was taken back');
  });

  t.test('lockDir on a hard link to a file: refused, nothing changed', async (t) => {
    const { dir } = jobDir('7');
    const f = linkedFile(dir, path.join(dir, 'b'));
    t.equal(thrown(() => lockDir(path.join(dir, 'b'))), `${path.join(dir, 'b')} changed type while being locked`);
    t.equal(owner(f), `${USER}:${USER} 640`);
  });

  t.test('a symbolic link where a directory was: refused, neither the link nor its target changed', async (t) => {
    const { s, dir } = jobDir('8');
    const target = path.join(dir, 'elsewhere');
    mkdirSync(target);
    chownSync(target, USER, USER);
    chmodSync(target, 0o755);
    const a = path.join(dir, 'a');
    symlinkSync(target, a);
    lchownSync(a, USER, USER); // the link itself
    t.equal(thrown(() => lockPathTo(s, path.join(a, 'm'))), `${a} changed type while being locked`);
    t.equal(`${lstatSync(a).uid}`, `${USER}`, 'the link is still the user\'s');
    t.equal(owner(target), `${USER}:${USER} 755`, 'its target untouched');
  });
}
