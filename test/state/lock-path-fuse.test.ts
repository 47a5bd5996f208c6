// lockPathTo (the Epilog's taking back of the path to a user's mount before it is detached) never enters a mount its
// user made on a directory of that path after the mount table named the deeper one: the job's directory is its user's
// until it is taken back, and fusermount mounts on what the user owns. Root's open of such a directory, to lock it, went
// into the user's FUSE file system; one whose daemon never answers (helpers/dead-fuse.ts) held the Epilog until slurmd's
// timeout, which drains the node. Here the guard closes the connection after GUARD_MS: a look that went in fails.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { lockPathTo } from '../../src/state/store.js';
import { canMountDeadFuse, deadFuse, type DeadFuse } from '../helpers/dead-fuse.js';
import { scratchDir } from '../helpers/scratch.js';
import { thrown } from '../helpers/thrown.js';

const USER = 4245;
const GUARD_MS = 5000;

if (!canMountDeadFuse()) t.skip('needs root, /dev/fuse and mount(8) that may mount a FUSE file system here', () => {});
else main();

function main(): void {
  const s = path.join(scratchDir('gdrgate-lockpath-'), 'run');
  fs.mkdirSync(s, { mode: 0o711 });
  const mounts: DeadFuse[] = [];
  t.teardown(() => mounts.reverse().forEach((m) => m.release()));
  /** stateDir/job-<id>/a/m, all the user's, and the user's dead FUSE on `on` (relative to the job's directory). */
  const job = (id: string, on: string): string => {
    const dir = path.join(s, `job-${id}`);
    fs.mkdirSync(path.join(dir, 'a', 'm'), { recursive: true, mode: 0o755 });
    for (const d of [dir, path.join(dir, 'a'), path.join(dir, 'a', 'm')]) fs.chownSync(d, USER, USER);
    const m = deadFuse(path.join(dir, on), USER, { guardMs: GUARD_MS });
    if (m === null) throw new Error(`no dead FUSE on ${on}`);
    mounts.push(m);
    return dir;
  };
  const owner = (p: string): string => {
    const st = fs.lstatSync(p);
    return `${st.uid}:${st.gid} ${(st.mode & 0o7777).toString(8)}`;
  };

  t.test("a mount on the job's directory itself", async (t) => {
    const dir = job('50', '.');
    const t0 = performance.now();
    const why = thrown(() => lockPathTo(s, path.join(dir, 'a', 'm')));
    t.same([why, performance.now() - t0 < GUARD_MS], [`${dir} is a mount: not entered`, true], 'refused at once, not entered');
  });

  t.test('a mount on a directory between it and the mount point named', async (t) => {
    const dir = job('51', 'a');
    const t0 = performance.now();
    const why = thrown(() => lockPathTo(s, path.join(dir, 'a', 'm')));
    t.same([why, performance.now() - t0 < GUARD_MS], [`${dir}/a is a mount: not entered`, true], 'refused at once, not entered');
    t.equal(owner(dir), '0:0 700', 'the job directory above it taken back');
  });
}
