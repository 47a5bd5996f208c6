// The Epilog's detach of a job user's many mounts: fusermount lets a user mount up to /etc/fuse.conf's mount_max (1000
// by default) file systems on what they own, and every one of them in the job's directory is the Epilog's to detach,
// before its deadline is counted, while the node waits COMPLETING. umount(8) is started once for all of a pass, never
// once a mount (200 mounts cost 200 processes, ~1.2 s here, and 1000 the Epilog ~6-20 s). tmpfs mounted as the user's
// stands in for FUSE; needs root and mount(8).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { epilogJobState } from '../../src/epilog/job-state.js';
import { ExecaExec, type Exec, type ExecOptions, type ExecResult } from '../../src/host/exec.js';
import { detachMounts, mountsBelow } from '../../src/host/mounts.js';
import { lockPathTo } from '../../src/state/store.js';
import { scratchDir } from '../helpers/scratch.js';
import { canMountAsUser, mountAsUser, USER } from '../helpers/user-tmpfs.js';

const MANY = 200;

/** A state directory (root's, 0711) with job `id`'s directory, its user's, holding MANY mount points of theirs. */
function jobWithMounts(id: string): { s: string; mps: string[] } {
  const top = scratchDir('gdrgate-mount-many-');
  chmodSync(top, 0o755);
  const s = path.join(top, 'state');
  mkdirSync(s, { mode: 0o711 });
  const dir = path.join(s, `job-${id}`);
  mkdirSync(dir, { mode: 0o755 });
  chownSync(dir, USER, USER);
  const mps = Array.from({ length: MANY }, (_, i) => path.join(dir, `m${i}`));
  for (const m of mps) {
    mkdirSync(m);
    chownSync(m, USER, USER);
  }
  return { s, mps: mps.filter(mountAsUser) };
}

if (!canMountAsUser()) t.skip('needs root and mount(8) that may mount a tmpfs here', () => {});
else main();

/**
 * The real umount for every mount but `stuck`; the call that names `stuck` answers with `then` (given what the real
 * umount said of the others): a mount umount cannot detach, or one it waits on.
 */
function sparing(stuck: string, then: (r: ExecResult, o: ExecOptions) => Promise<ExecResult>): Exec {
  const real = new ExecaExec();
  return {
    run: async (file, args, o) => {
      const r = await real.run(file, args.filter((a) => a !== stuck), o);
      return args.includes(stuck) ? then(r, o) : r;
    },
    ready: () => real.ready(),
  };
}

function main(): void {
  t.teardown(() => {
    for (const m of mountsBelow('/tmp').concat(mountsBelow('/dev/shm'))) if (m.includes('gdrgate-mount-many-')) spawnSync('/usr/bin/umount', ['--lazy', m]);
  });

  t.test(`${MANY} mounts of the user's in the job's directory: one umount for all of them`, async (t) => {
    const { s, mps } = jobWithMounts('7');
    t.equal(mps.length, MANY, 'all mounted');
    const calls: (readonly string[])[] = [];
    const real = new ExecaExec();
    const exec: Exec = { run: async (file, args, o) => (calls.push(args), real.run(file, args, o)), ready: () => real.ready() };
    t.same(await detachMounts(() => mountsBelow(s), (mp) => lockPathTo(s, mp), exec), [], 'nothing left');
    t.equal(calls.length, 1, 'one umount process');
    t.same(calls[0]?.slice(0, 3), ['--lazy', '--no-canonicalize', '--'], 'lazily, paths as they are');
    t.same([...(calls[0]?.slice(3) ?? [])].sort(), [...mps].sort(), 'naming every mount');
    t.same(mountsBelow(s), [], 'all detached');
  });

  t.test('one of them the umount cannot detach: named alone, the others detached', async (t) => {
    const { s, mps } = jobWithMounts('8');
    // umount refuses the first one (as a mount that is busy without --lazy would be): it stays, the rest go.
    const stuck = mps[0]!;
    const exec = sparing(stuck, async (r) => ({ ...r, exitCode: 32, stderr: `umount: ${stuck}: target is busy.\n` }));
    const left = await detachMounts(() => mountsBelow(s), (mp) => lockPathTo(s, mp), exec);
    t.same(left, [`${stuck}: umount: ${stuck}: target is busy.`]);
    t.same(mountsBelow(s), [stuck], 'only it is still mounted');
    spawnSync('/usr/bin/umount', ['--lazy', stuck]);
  });

  t.test("an umount that does not end in its 5 s: the mount named with the timeout, not an exit status", async (t) => {
    const { s, mps } = jobWithMounts('10');
    const real = new ExecaExec();
    // The others detached by the real umount; the call naming `stuck` then waits as a umount stuck on an
    // unresponsive file system would, and is killed at its own timeout.
    const stuck = mps[0]!;
    const exec = sparing(stuck, (_r, o) => real.run('/usr/bin/sleep', ['30'], o));
    const left = await detachMounts(() => mountsBelow(s), (mp) => lockPathTo(s, mp), exec);
    t.same(left, [`${stuck}: timed out after 5000 ms`]);
    t.same(mountsBelow(s), [stuck], 'only it is still mounted');
    spawnSync('/usr/bin/umount', ['--lazy', stuck]);
  });

  t.test('the Epilog: every mount detached and the directory removed', async (t) => {
    const { s } = jobWithMounts('9');
    const o = await epilogJobState(s, '9', 'vm');
    t.equal(o.removed, true, "job-9's directory removed");
    t.equal(o.ownerUid, USER, "the job's user, seen before the lock");
    t.same(mountsBelow(s), [], 'none left');
  });
}
