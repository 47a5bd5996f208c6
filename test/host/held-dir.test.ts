// HeldDir (src/host/held-dir.ts) looks at names in a user's directory and never enters a mount: on FUSE file systems
// whose daemon never answers (helpers/dead-fuse.ts), mounted as the user's with allow_other on a directory, on a file,
// and on the held directory's own path after it was held, every look returns at once and tells the mount; what lies
// on the directory's own file system is read as readSmall reads it. A look that went in would wait on this thread
// until the guard closes the connection (ENOTCONN), and the asserts on what it returned fail.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { HeldDir } from '../../src/host/held-dir.js';
import { canMountDeadFuse, deadFuse, type DeadFuse } from '../helpers/dead-fuse.js';
import { scratchDir } from '../helpers/scratch.js';
import { thrown } from '../helpers/thrown.js';

const USER = 65534;
const GUARD_MS = 5000;

if (!canMountDeadFuse()) t.skip('needs root, /dev/fuse and mount(8) that may mount a FUSE file system here', () => {});
else main();

function main(): void {
  const top = scratchDir('gdrgate-held-');
  fs.chmodSync(top, 0o755);
  const job = path.join(top, 'job-7');
  fs.mkdirSync(job);
  fs.writeFileSync(path.join(job, 'facts'), 'v1 facts\n');
  fs.writeFileSync(path.join(job, 'mounted'), '');
  fs.symlinkSync('/etc/passwd', path.join(job, 'link'));
  fs.mkdirSync(path.join(top, 'job-8'));
  fs.chownSync(job, USER, USER);
  const mounts: DeadFuse[] = [];
  // The last mounted first: one stacked on a path through another is detached before that one.
  t.teardown(() => mounts.reverse().forEach((m) => m.release()));
  const mount = (at: string): void => {
    const m = deadFuse(at, USER, { guardMs: GUARD_MS });
    if (m === null) throw new Error(`no dead FUSE on ${at}`);
    mounts.push(m);
  };
  mount(path.join(top, 'job-8'));
  mount(path.join(job, 'mounted'));

  const held = HeldDir.of(top);
  if (typeof held === 'string') throw new Error(held);
  t.teardown(() => held.close());

  t.test('a mount on a name in the held directory is told, never entered', async (t) => {
    t.equal(held.lstat('job-8'), 'mount', 'lstat of a directory with a mount on it');
    t.equal(held.dir('job-8'), 'mount', 'holding it');
    t.equal(held.lstat('job-9'), null, 'a name that is not there');
    t.equal(held.dir('job-7') !== 'mount' && held.lstat('job-7') !== 'mount', true, "the job's own directory is no mount");
  });

  t.test("names in the job's directory, held, and a mount on its path after it was held", async (t) => {
    const jd = held.dir('job-7');
    if (jd === null || typeof jd === 'string') throw new Error(`job-7 not held: ${jd}`);
    t.teardown(() => jd.close());
    t.same([jd.path, jd.stats.uid, jd.stats.isDirectory()], [job, USER, true], 'held with its own lstat');
    const fact = jd.read('facts', { max: 100, owner: 0 });
    t.same(fact.ok ? fact.value.toString() : fact, 'v1 facts\n', 'a regular file read whole');
    t.same(jd.read('mounted', { max: 100 }), { ok: false, kind: 'unsafe', why: `${job}/mounted is a mount: not entered` }, 'a file with a mount on it');
    t.same(jd.read('link', { max: 100 }), { ok: false, kind: 'unsafe', why: `${job}/link is not a regular file (a symbolic link)` }, 'a link, not followed');
    t.same(jd.read('none', { max: 100 }), { ok: false, kind: 'missing', why: `${job}/none: no such file (ENOENT)` }, 'a name that is not there');
    t.same(jd.read('facts', { max: 4 }), { ok: false, kind: 'unsafe', why: `${job}/facts is larger than 4 bytes` }, "readSmall's rules");
    // Its user mounts on the directory itself now: the held directory is still the one looked into.
    mount(job);
    const again = jd.read('facts', { max: 100 });
    t.same(again.ok ? again.value.toString() : again, 'v1 facts\n', 'read in the directory held, not in the mount on its path');
    t.equal(held.lstat('job-7'), 'mount', 'looked up by name again, it is a mount');
  });

  t.test('names that are no name in it are refused before any look', async (t) => {
    for (const n of ['', '.', '..', 'job-7/facts']) t.equal(thrown(() => held.lstat(n)), `${JSON.stringify(n)} is not a name in ${top}`, JSON.stringify(n));
  });
}
