// The .debs' Depends: what the Node each one carries needs, and no more. For each package, the newest GLIBC_ and
// GLIBCXX_ symbol versions its Node links against (objdump -T, as the dynamic loader resolves them), turned into the
// Debian package version that first has them by that package's own symbols file on this machine (dpkg's
// /var/lib/dpkg/info/libc6:*.symbols and libstdc++6:*.symbols, which dpkg-shlibdeps reads): the Depends line must name
// exactly those. libgcc_s under either of its Debian names (libgcc-s1 from bullseye on, libgcc1 before).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { scratchDir } from '../helpers/scratch.js';
import { artifacts, missing, run, unpackDeb } from './_artifacts.js';

const INFO = '/var/lib/dpkg/info';
const symbolsOf = (pkg: string): string | null => readdirSync(INFO).find((f) => f.startsWith(`${pkg}:`) && f.endsWith('.symbols')) ?? null;
const why = missing(['dpkg-deb', 'objdump']) ?? (symbolsOf('libc6') && symbolsOf('libstdc++6') ? undefined : 'no libc6 or libstdc++6 symbols file in /var/lib/dpkg/info');

/** Dotted versions compared part by part. */
const newer = (a: string, b: string): boolean => {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
  return false;
};

/** The newest `TAG_x.y` version among the binary's dynamic symbols. */
function newest(dynsyms: string, tag: string): string {
  let best = '0';
  for (const m of dynsyms.matchAll(new RegExp(`\\b${tag}_([0-9][0-9.]*[0-9])\\b`, 'g'))) if (newer(m[1]!, best)) best = m[1]!;
  return best;
}

/** The package version a symbols file gives the version node `TAG_v` (its line ` TAG_v@TAG_v VERSION`). */
function firstWith(pkg: string, tag: string, v: string): string {
  const text = readFileSync(path.join(INFO, symbolsOf(pkg)!), 'utf8');
  const m = new RegExp(`^ ${tag}_${v.replace(/\./g, '\\.')}@${tag}_${v.replace(/\./g, '\\.')} (\\S+)$`, 'm').exec(text);
  if (!m) throw new Error(`${pkg}'s symbols file has no ${tag}_${v}`);
  return m[1]!;
}

if (why) {
  t.skip(`Depends test skipped: ${why}`, () => {});
} else {
  const a = artifacts();
  const tmp = scratchDir('gdrgate-depends-');
  for (const deb of [a.deb, a.debArm64])
    t.test(path.basename(deb), async (t) => {
      const node = path.join(unpackDeb(deb, tmp).root, 'usr/lib/gdrgate/node');
      const syms = run('objdump', ['-T', node]);
      t.equal(syms.status, 0, syms.stderr);
      const libc = firstWith('libc6', 'GLIBC', newest(syms.stdout, 'GLIBC'));
      const cxx = firstWith('libstdc++6', 'GLIBCXX', newest(syms.stdout, 'GLIBCXX'));
      t.equal(run('dpkg-deb', ['-f', deb, 'Depends']).stdout, `libc6 (>= ${libc}), libstdc++6 (>= ${cxx}), libgcc-s1 | libgcc1\n`);
    });
}
