// The Epilog detaches a job user's mounts in the state directory by path, and the kernel looks that path up again at
// umount(2): each directory between the state directory and the mount point is made root's (0700) before, so its user
// can no longer swap one for a link and aim the detach at another mount on the node; only the outermost mount is named
// (a path through the user's own file system is looked up by it); another running job's mounts are left to its own
// Epilog. tmpfs mounted as the user's stands in for FUSE; needs root and mount(8).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { epilogJobState } from '../../src/epilog/job-state.js';
import { ExecaExec, type Exec } from '../../src/host/exec.js';
import { detachMounts, mountsBelow } from '../../src/host/mounts.js';
import { lockPathTo } from '../../src/state/store.js';
import { scratchDir } from '../helpers/scratch.js';
import { canMountAsUser, mountAsUser, USER } from '../helpers/user-tmpfs.js';


/** A state directory (root's, 0711) with the user's directories `rel` under it, made as the Prolog and the user would. */
function userDirs(stateDir: string, rel: string): string {
  let d = stateDir;
  for (const c of rel.split('/')) {
    d = path.join(d, c);
    mkdirSync(d, { mode: 0o755 });
    chownSync(d, USER, USER);
  }
  return d;
}

function stateDir(): string {
  const top = scratchDir('gdrgate-mount-path-');
  chmodSync(top, 0o755);
  const s = path.join(top, 'state');
  mkdirSync(s, { mode: 0o711 });
  return s;
}

if (!canMountAsUser()) t.skip('needs root and mount(8) that may mount a tmpfs here', () => {});
else main();

function main(): void {
  t.teardown(() => {
    for (const m of mountsBelow('/tmp').concat(mountsBelow('/dev/shm'))) if (m.includes('gdrgate-mount-path-')) spawnSync('/usr/bin/umount', ['--lazy', m]);
  });

  t.test('the path is taken back before umount runs; only the outermost mount is named', async (t) => {
    const s = stateDir();
    const m = userDirs(s, 'job-7/a/b/m');
    t.equal(mountAsUser(m), true, "the user's mount");
    mkdirSync(path.join(m, 'x'));
    t.equal(mountAsUser(path.join(m, 'x')), true, 'a mount inside it');
    const seen: string[] = [];
    const real = new ExecaExec();
    const exec: Exec = {
      run: (file, args, o) => {
        for (const d of ['job-7', 'job-7/a', 'job-7/a/b']) {
          const st = lstatSync(path.join(s, d));
          seen.push(`${d} ${st.uid} ${(st.mode & 0o7777).toString(8)}`);
        }
        seen.push(`${file} ${args.join(' ')}`);
        return real.run(file, args, o);
      },
      ready: () => real.ready(),
    };
    t.same(await detachMounts(() => mountsBelow(s), (mp) => lockPathTo(s, mp), exec), [], 'nothing left');
    t.same(seen, ['job-7 0 700', 'job-7/a 0 700', 'job-7/a/b 0 700', `/usr/bin/umount --lazy --no-canonicalize -- ${m}`]);
    t.same(mountsBelow(s), [], 'both mounts gone');
  });

  t.test('a link in place of a directory on the way: not detached, umount never run', async (t) => {
    const s = stateDir();
    const m = userDirs(s, 'job-8/a/m');
    t.equal(mountAsUser(m), true, "the user's mount");
    const victim = scratchDir('gdrgate-mount-path-victim-');
    symlinkSync(victim, path.join(s, 'job-8', 'alink'));
    const calls: string[] = [];
    const exec: Exec = { run: async (file, args, o) => (calls.push(args.join(' ')), new ExecaExec().run(file, args, o)), ready: () => new ExecaExec().ready() };
    // The user's swap, done before the lock reaches it: job-8/a is now the link, the mount's directory moved aside.
    spawnSync('/usr/bin/mv', ['-T', path.join(s, 'job-8', 'a'), path.join(s, 'job-8', 'moved')]);
    spawnSync('/usr/bin/mv', ['-T', path.join(s, 'job-8', 'alink'), path.join(s, 'job-8', 'a')]);
    const left = await detachMounts(() => [m], (mp) => lockPathTo(s, mp), exec);
    t.same(left, [`${m}: not detached, its path not taken back (${s}/job-8/a changed type while being locked)`]);
    t.same(calls, [], 'umount never ran');
    t.same(mountsBelow(s), [path.join(s, 'job-8', 'moved', 'm')], "the user's mount stays where it was moved");
  });

  t.test('a directory above the mount swapped for a decoy before the lock (its mount point a link): the decoy is never named, the mount found where it went', async (t) => {
    const s = stateDir();
    const b = userDirs(s, 'job-9/a/b');
    t.equal(mountAsUser(b), true, "the user's mount");
    const victim = scratchDir('gdrgate-mount-path-victim-');
    mkdirSync(path.join(victim, 'm'));
    t.equal(mountAsUser(path.join(victim, 'm')), true, 'a mount elsewhere on the node');
    const stale = mountsBelow(s);
    // The user, between the Epilog's read of the table and its lock: job-9/a moved away (the mount with it), a decoy
    // directory in its place whose b is a link to the other mount.
    spawnSync('/usr/bin/mv', ['-T', path.join(s, 'job-9', 'a'), path.join(s, 'job-9', 'a2')]);
    mkdirSync(path.join(s, 'job-9', 'a'));
    symlinkSync(path.join(victim, 'm'), path.join(s, 'job-9', 'a', 'b'));
    let reads = 0;
    const calls: string[] = [];
    const exec: Exec = { run: async (file, args, o) => (calls.push(args.at(-1)!), new ExecaExec().run(file, args, o)), ready: () => new ExecaExec().ready() };
    const left = await detachMounts(() => (reads++ === 0 ? stale : mountsBelow(s)), (mp) => lockPathTo(s, mp), exec);
    t.same(left, []);
    t.same(calls, [path.join(s, 'job-9', 'a2', 'b')], 'umount named only where the mount really was');
    t.same(mountsBelow(victim), [path.join(victim, 'm')], 'the other mount is still there');
    t.same(mountsBelow(s), [], "the user's mount detached");
    spawnSync('/usr/bin/umount', [path.join(victim, 'm')]);
  });

  t.test('a mount stacked on the job directory over one inside it: both detached', async (t) => {
    const s = stateDir();
    const inner = userDirs(s, 'job-6/a/m');
    t.equal(mountAsUser(inner), true, 'a mount inside');
    t.equal(mountAsUser(path.join(s, 'job-6')), true, 'a mount over the whole job directory');
    t.same(await detachMounts(() => mountsBelow(s), (mp) => lockPathTo(s, mp)), []);
    t.same(mountsBelow(s), [], 'none left');
  });

  t.test("the Epilog: this job's mounts and a set-aside directory's detached, another running job's left", async (t) => {
    const s = stateDir();
    const own = userDirs(s, 'job-7/a/m');
    const other = userDirs(s, 'job-9/m');
    const aside = path.join(s, '.stale-job-5-0a1b2c3d');
    mkdirSync(aside, { mode: 0o700 });
    const stale = userDirs(aside, 'm');
    for (const m of [own, other, stale]) t.equal(mountAsUser(m), true, `mounted ${path.relative(s, m)}`);
    const o = await epilogJobState(s, '7', 'vm');
    t.equal(o.removed, true, "job-7's directory removed");
    t.equal(o.ownerUid, USER, "the job's user, seen before the lock");
    t.same(mountsBelow(s), [other], "job-9's mount only");
    t.equal(existsSync(path.join(s, 'job-9')), true, "job-9's directory untouched");
    t.equal(lstatSync(path.join(s, 'job-9')).uid, USER, 'still its user\'s');
  });
}
