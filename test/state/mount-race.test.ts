// A mount its user makes in their job's directory after root read the mount table and before root took the directory
// back (lockDir: root's, 0700; from then on fusermount, looking the mount point up through it, is refused) is never
// entered: the table is read again once the directory is root's. Without that, root's removal lstat'ed, locked and
// emptied the user's mount (with allow_other a FUSE daemon there holds root's every look), set the directory aside
// with the mount in it, and the next reclaim entered it again; the Epilog read the user's file mounted on task.json.
// The race is made deterministic: the table is read, then the user mounts, then root goes on from the stale table. A
// mount made on the directory itself in that window is told by looking at it as held (host/held-dir.ts), not by a table.
// tmpfs (and a bind mount of a file) as the user's stand in for FUSE; needs root and mount(8).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { mountsBelow } from '../../src/host/mounts.js';
import { collectJobState } from '../../src/state/epilog.js';
import { TASK_FORMAT } from '../../src/state/names.js';
import { removeJobDir } from '../../src/state/store.js';
import { scratchDir } from '../helpers/scratch.js';
import { canMountAsUser, mountAsUser, unmountAllBelow, USER } from '../helpers/user-tmpfs.js';

/** A state directory with job 42's, its user's, holding `x` (a directory of theirs) and task.json. */
function jobDir(t: Test): { s: string; dir: string } {
  const top = scratchDir('gdrgate-mount-race-');
  t.teardown(() => unmountAllBelow(top));
  fs.chmodSync(top, 0o755);
  const s = path.join(top, 'run');
  fs.mkdirSync(s, { mode: 0o711 });
  const dir = path.join(s, 'job-42');
  fs.mkdirSync(path.join(dir, 'x'), { recursive: true, mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'task.json'), '{}');
  for (const p of [dir, path.join(dir, 'x'), path.join(dir, 'task.json')]) fs.chownSync(p, USER, USER);
  return { s, dir };
}

/** What is mounted below `s`, each with its root's owner (0: root went in and took it). */
const mounted = (s: string): [string, number][] => mountsBelow(s).map((m) => [m, fs.statSync(m).uid]);
const staleNames = (s: string): string[] => fs.readdirSync(s).filter((n) => n.startsWith('.stale-'));

if (!canMountAsUser()) t.skip('needs root and mount(8) that may mount a tmpfs here', () => {});
else {

  t.test('the Prolog removing an earlier attempt\'s directory: a mount made in it since the table was read', async (t) => {
    const { s, dir } = jobDir(t);
    const table = mountsBelow(s);
    t.equal(mountAsUser(path.join(dir, 'x')), true, "the user's mount, after the read");
    t.same(removeJobDir(s, '42', undefined, { mounts: table }), { ok: false, why: `${dir}/x is a mount: not entered`, setAside: null });
    t.same(mounted(s), [[`${dir}/x`, USER]], 'where it was, its root still the user\'s');
    t.same(staleNames(s), [], 'nothing set aside');
  });

  t.test('the Epilog: a mount made in the directory since the table was read', async (t) => {
    const { s, dir } = jobDir(t);
    const table = mountsBelow(s);
    t.equal(mountAsUser(path.join(dir, 'x')), true, "the user's mount, after the read");
    const got = collectJobState(s, '42', table);
    const why = `${dir}/x is a mount: not entered`;
    t.same(got, { job: '42', ownerUid: USER, task: null, taskWhy: why, removed: false, error: `${dir}/x is a mount (its user's?): not entered, not removed`, reclaimed: null });
    t.same(mounted(s), [[`${dir}/x`, USER]], 'where it was, its root still the user\'s');
    t.same(staleNames(s), [], 'nothing set aside');
  });

  t.test('the Epilog: a file of the user\'s mounted on task.json since the table was read is not read', async (t) => {
    const { s, dir } = jobDir(t);
    const forged = path.join(path.dirname(s), 'forged.json');
    fs.writeFileSync(forged, JSON.stringify({ format: TASK_FORMAT, job: '42', step: 'batch', state: 'trusted', findings: [] }));
    const table = mountsBelow(s);
    t.equal(spawnSync('/usr/bin/mount', ['--bind', forged, path.join(dir, 'task.json')]).status, 0, 'mounted on task.json, after the read');
    const got = collectJobState(s, '42', table);
    const why = `${dir}/task.json is a mount: not entered`;
    t.same([got.task, got.taskWhy, got.removed], [null, why, false], 'not read, not removed');
    t.same(mountsBelow(s), [`${dir}/task.json`], 'still mounted there');
  });

  t.test("a mount made on the job's directory itself since the table was read: looked at as held, not entered", async (t) => {
    const cases: readonly [string, (s: string, table: string[]) => unknown, (dir: string) => unknown][] = [
      ['the Prolog', (s, table) => removeJobDir(s, '42', undefined, { mounts: table }), (dir) => ({ ok: false, why: `${dir} is a mount: not entered`, setAside: null })],
      ['the Epilog', (s, table) => collectJobState(s, '42', table), (dir) => ({ job: '42', ownerUid: null, task: null, taskWhy: `${dir} is a mount: not entered`, removed: false, error: `${dir} is a mount (its user's?): not entered, not removed`, reclaimed: null })],
    ];
    for (const [what, remove, want] of cases) {
      const { s, dir } = jobDir(t);
      const table = mountsBelow(s);
      t.equal(mountAsUser(dir), true, `${what}: the user's mount on job-42, after the read`);
      t.same(remove(s, table), want(dir), `${what}: not entered`);
      // Gone in, root would have taken the mount's root (lockDir: root's, 0700).
      t.same(mounted(s), [[dir, USER]], `${what}: the mount where it was, its root still the user's`);
      t.same(staleNames(s), [], `${what}: nothing set aside`);
    }
  });

  t.test('a mount on the job directory itself is not entered; another job\'s, whose id begins with this one\'s, is not this one\'s', async (t) => {
    const { s, dir } = jobDir(t);
    t.equal(mountAsUser(dir), true, "the user's mount over the whole job directory");
    t.same(removeJobDir(s, '42'), { ok: false, why: `${dir} is a mount: not entered`, setAside: null }, 'the Prolog');
    const got = collectJobState(s, '42');
    t.same([got.taskWhy, got.removed, got.error], [`${dir} is a mount: not entered`, false, `${dir} is a mount (its user's?): not entered, not removed`], 'the Epilog');
    // Job 4 beside job 42 (its mount over job-42): job-4's directory is its own, read and removed.
    for (const [what, remove] of [['the Prolog', () => removeJobDir(s, '4')], ['the Epilog', () => collectJobState(s, '4')]] as const) {
      fs.mkdirSync(path.join(s, 'job-4'), { mode: 0o755 });
      fs.chownSync(path.join(s, 'job-4'), USER, USER);
      const r = remove();
      t.same(['removed' in r ? r.removed : null, 'error' in r ? r.error : null, fs.existsSync(path.join(s, 'job-4'))], [true, null, false], what);
    }
    t.same(mounted(s), [[dir, USER]], "job-42's mount where it was");
  });
}
