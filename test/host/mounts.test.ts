// host/mounts.ts mountsBelow, the mount table read: the mount points strictly below a directory, deepest first, their
// names unescaped, from the kernel's own table (mounts made here, named with every character show_mountinfo escapes)
// and from seeded tables in its format, against the plain reading (each line split, its fifth field unescaped).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { mountPointsBelow, mountsBelow } from '../../src/host/mounts.js';
import { scratchDir } from '../helpers/scratch.js';
import { seeded } from '../helpers/seeded.js';
import { canMountAsUser, mountAsUser, unmountAllBelow } from '../helpers/user-tmpfs.js';

/** The plain reading: every line split on spaces, its fifth field unescaped (\ooo), kept when below `dir`. */
function plain(text: string, dir: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const mp = line.split(' ')[4];
    if (mp === undefined) continue;
    const p = mp.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (p.startsWith(`${dir}/`)) out.push(p);
  }
  return out.sort((a, b) => b.length - a.length);
}

/** show_mountinfo's escaping (fs/proc_namespace.c: space, tab, newline and backslash as \ooo). */
const esc = (s: string): string => s.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);

t.test('seeded tables in show_mountinfo\'s format: the same mount points as the plain reading, in the same order', (t) => {
  const r = seeded(0x6d6f756e);
  // Names of what a user may name a directory, escapes spelled out among them ("\040" as four characters).
  const parts = ['a', 'b', 'job-42', ' ', '\t', '\n', '\\', '\\040', '040', '/', '-', 'é'];
  const dirs = ['/run/gdrgate', '/run/gdr gate', '/tmp/a\\b', '/x\t/y\n'];
  let found = 0;
  for (let n = 0; n < 300; n++) {
    const dir = r.pick(dirs);
    const lines = Array.from({ length: 1 + r.int(40) }, (_, i) => {
      const under = r.pick([dir, `${dir}/`, `${dir}x`, '/run', `${dir}/${r.join(parts, 1 + r.int(3))}`]);
      const mp = `${under}${r.int(2) ? `/${r.join(parts, 1 + r.int(6))}` : ''}`;
      const root = r.pick(['/', esc(mp), esc(`${dir}/${r.join(parts, 2)}`)]);
      const optional = r.pick(['', ' shared:7', ' master:3 propagate_from:2', ' shared:12 master:1']);
      return `${100 + i} 27 0:${40 + i} ${root} ${esc(mp)} rw,nosuid,nodev,relatime${optional} - fuse.sshfs u@login:/data\\040x rw,user_id=4245,group_id=4245`;
    });
    const text = lines.join('\n') + (r.int(2) ? '\n' : '');
    const want = plain(text, dir);
    found += want.length;
    t.same(mountPointsBelow(text, dir), want, `table ${n}`);
  }
  t.ok(found > 1000, `mount points below the directory among them (${found})`);
  t.end();
});

t.test('lines cut short or empty are no mount points', (t) => {
  t.same(mountPointsBelow('\n\n1 2 0:3 /\n1 2 0:3 / /run/gdrgate/a\n1 2 0:3 / /run/gdrgate/bb rw - tmpfs t rw', '/run/gdrgate'), ['/run/gdrgate/bb', '/run/gdrgate/a']);
  t.end();
});

if (!canMountAsUser()) t.skip('the kernel\'s own table: needs root and mount(8) that may mount a tmpfs here', () => {});
else {
  t.test("the kernel's own table: every character show_mountinfo escapes, in the directory's name and below it", (t) => {
    const top = scratchDir('gdrgate-mounts-names-');
    const dir = path.join(top, 'state dir\\040');
    const names = ['a b', 'tab\there', 'new\nline', 'back\\040slash', 'plain', path.join('plain', 'deeper')];
    const mps = names.map((n) => path.join(dir, n));
    fs.mkdirSync(dir);
    fs.mkdirSync(`${dir}x`);
    t.teardown(() => unmountAllBelow(top));
    // Each mount point made in the file system mounted above it.
    for (const m of [dir, `${dir}x`, ...mps]) {
      fs.mkdirSync(m, { recursive: true });
      t.ok(mountAsUser(m), `mounted ${JSON.stringify(m)}`);
    }
    const byDepth = [...mps].sort((a, b) => b.length - a.length);
    t.same(mountsBelow(dir), byDepth, 'those below it, not it, not its sibling');
    t.same(mountsBelow(top), [...byDepth, `${dir}x`, dir].sort((a, b) => b.length - a.length), 'from above: all of them');
    t.same(mountsBelow(dir), plain(fs.readFileSync('/proc/self/mountinfo', 'utf8'), dir), 'as the plain reading has them');
    t.end();
  });
}
