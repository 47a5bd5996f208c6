// The trust walk against the kernel, on seeded random layouts: directories of root's or another user's (uid 65534),
// group-writable for that user's group, world-writable, sticky; links (theirs or root's, absolute or relative, with
// `..`) on the way. The oracle is that user: as uid 65534 it tries to change what the path leads to (rename an entry
// on the way and back, chmod a directory of theirs, open the file for writing). The walk must call a path trusted
// exactly when none of that succeeds. Bounded: ROUNDS layouts (a count, not a time); needs root.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lchownSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { untrustedReason } from '../../src/host/trust.js';
import { mulberry32 } from '../helpers/seeded.js';
import { scratchDir } from '../helpers/scratch.js';

const USER = 65534;
const SEED = Number(process.env.GDRGATE_FUZZ_SEED ?? 20261205);
const ROUNDS = 300;
const MODES = [0o755, 0o755, 0o755, 0o755, 0o755, 0o755, 0o775, 0o777, 0o1777, 0o1775];

/** As uid 65534: for each step (directory, entry) of the kernel's lookup, try to move the entry away and back; chmod
 * each directory a name is looked up in (theirs: they could open it to writes), and the file; open the file for
 * writing. Prints what succeeded, one per line (nothing: unchangeable). */
const ORACLE = `
import os, sys
def steps(p):
    todo = [c for c in p.split('/') if c]; cur = '/'; out = []; n = 0
    while todo:
        c = todo.pop(0)
        if c == '.': continue
        if c == '..': cur = os.path.dirname(cur); continue
        nxt = os.path.join(cur, c); out.append((cur, c))
        if os.path.islink(nxt):
            n += 1
            if n > 40: raise SystemExit('loop')
            tg = os.readlink(nxt)
            if tg.startswith('/'): cur = '/'
            todo = [x for x in tg.split('/') if x] + todo; continue
        cur = nxt
    return cur, out
real, out = steps(sys.argv[1])
assert real == os.path.realpath(sys.argv[1]), (real, os.path.realpath(sys.argv[1]))
os.setgid(${USER}); os.setgroups([]); os.setuid(${USER})
for d, c in out:
    a = os.path.join(d, c); b = os.path.join(d, '.moved-' + c)
    try:
        os.rename(a, b); os.rename(b, a); print('rename', a)
    except OSError: pass
for a in sorted({d for d, c in out} | {real}):
    try:
        os.chmod(a, os.lstat(a).st_mode & 0o7777); print('chmod', a)
    except OSError: pass
try:
    os.close(os.open(real, os.O_WRONLY | os.O_APPEND)); print('write', real)
except OSError: pass
`;

if (process.getuid?.() !== 0) t.skip('needs root: another user tries each layout', () => {});
else main();

function main(): void {
  const r = mulberry32(SEED);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  let trusted = 0;
  let refused = 0;
  const wrong: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const top = scratchDir('gdrgate-trustfuzz-');
    chmodSync(top, 0o755);
    // Three chains of directories a/b/c under top, each with its owner and mode, and a file at the end of each.
    const dirs: string[] = [];
    for (const chain of ['x', 'y', 'z']) {
      let d = path.join(top, chain);
      for (let depth = 0; depth < 3; depth++) {
        mkdirSync(d);
        chmodSync(d, pick(MODES));
        chownSync(d, r() < 0.1 ? USER : 0, USER);
        dirs.push(d);
        d = path.join(d, `d${depth}`);
      }
    }
    for (const d of dirs) {
      const f = path.join(d, 'file');
      writeFileSync(f, '{}\n');
      chmodSync(f, r() < 0.1 ? 0o666 : 0o644);
      chownSync(f, r() < 0.1 ? USER : 0, USER);
      // A link in this directory to another's file or directory: root's or theirs, absolute or relative.
      const to = pick(dirs);
      const target = r() < 0.5 ? to : path.relative(d, to) || '.';
      const link = path.join(d, 'ln');
      symlinkSync(r() < 0.5 ? target : path.join(target, 'file'), link);
      if (r() < 0.3) lchownSync(link, USER, USER);
    }
    // A path through some of it: a start directory, then entries, links and `..`.
    let p = pick(dirs);
    for (let k = 0, n = 1 + Math.floor(r() * 3); k < n; k++) p += pick(['/ln', '/ln/..', '/..', '/d0', '/d1', '/ln/ln']);
    p += '/file';
    let real: string;
    try {
      real = realpathSync.native(p); // realpath(3): the kernel's lookup (the JS realpathSync takes `link/..` away as text first)
    } catch {
      continue; // no such file on this layout: nothing to judge
    }
    const why = untrustedReason(p, 0);
    const o = spawnSync('/usr/bin/python3', ['-c', ORACLE, p], { encoding: 'utf8' });
    if (o.status !== 0) {
      wrong.push(`${p}: the oracle failed: ${o.stderr.trim().split('\n').pop()}`);
      continue;
    }
    const changed = o.stdout.trim();
    if (why === null) trusted++;
    else refused++;
    if ((why === null) !== (changed === '')) wrong.push(`${p} (-> ${real}): walk ${why === null ? 'trusted it' : `refused it: ${why}`}; uid ${USER} ${changed === '' ? 'could change nothing' : `could: ${changed.replace(/\n/g, '; ')}`}`);
  }
  t.same(wrong, [], `seed ${SEED}: the walk agrees with what uid ${USER} can do`);
  t.equal(trusted > 5 && refused > 5, true, `both answers met (${trusted} trusted, ${refused} refused)`);
}
