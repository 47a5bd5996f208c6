// The .deb's modes are the package's, not its builder's umask: built under 002 (a Debian or Ubuntu user's, with a
// group of its own) it ships no group-writable directory or file; under 027 (a hardened root's) it builds at all, and
// every directory on a node's path stays traversable (the TaskProlog runs as the job's user).
import t from 'tap';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { scratchDir } from '../helpers/scratch.js';
import { missing, run } from './_artifacts.js';

const why = missing(['dpkg-deb']);
if (why) t.skip(`packaging tests skipped: ${why}`, () => {});
else {
  t.setTimeout(900_000);
  const tmp = scratchDir('gdrgate-umask-');
  // The modes a package's entries may have: directories 0755, files 0644 or 0755, links.
  const usual = /^(drwxr-xr-x|-rw-r--r--|-rwxr-xr-x|lrwxrwxrwx) /;
  for (const umask of ['002', '027'])
    t.test(`built under umask ${umask}: every entry 0755, 0644 or a link`, async (t) => {
      const out = path.join(tmp, umask);
      const b = run('/bin/sh', ['-c', `umask ${umask} && exec "$0" scripts/package.mjs --arch x64 --no-rpm --out "$1"`, process.execPath, out], { timeoutMs: 600_000 });
      t.equal(b.status, 0, b.stderr);
      const deb = readdirSync(out).filter((f) => f.endsWith('.deb'));
      t.equal(deb.length, 1);
      if (deb.length !== 1) return;
      const entries = run('dpkg-deb', ['-c', path.join(out, deb[0]!)]).stdout.trim().split('\n');
      t.ok(entries.length > 40, `${entries.length} entries`);
      t.same(entries.filter((l) => !usual.test(l)).map((l) => `${l.split(/\s+/)[0]} ${l.split(/\s+/)[5]}`), []);
    });
}
