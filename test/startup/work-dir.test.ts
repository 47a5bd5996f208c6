// `gdrgate startup-snapshot` leaves nothing in TMPDIR however it ends (a build's work directory holds ~20 MiB): SIGTERM
// mid-build removes it, one killed outright is swept by the next build, and only dead builders' private directories
// go. As root it refuses, before building, to make a blob where the Slurm wrappers would never start it.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';
import { sweepWorkDirs } from '../../src/startup/work-dir.js';

const PROGRAM = path.join(REPO, 'dist/gdrgate.cjs');
const CAPTURE = path.join(REPO, 'examples/h200-vm.tar.gz');
const uid = process.getuid!();

/** A pid that ran and ended. */
const deadPid = (): number => Number(spawnSync('/bin/sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim());

t.test('the sweep takes dead builders\' private directories, nothing else', async (t) => {
  const tmp = scratchDir('gdrgate-work-sweep-');
  const dead = deadPid();
  const live = spawn('/bin/sleep', ['60']);
  t.teardown(() => live.kill());
  const dir = (name: string, mode = 0o700): string => {
    mkdirSync(path.join(tmp, name));
    chmodSync(path.join(tmp, name), mode);
    writeFileSync(path.join(tmp, name, 'built.blob'), 'x');
    return name;
  };
  const gone = dir(`gdrgate-startup-${dead}-AbC123`);
  dir(`gdrgate-startup-${live.pid}-AbC123`);
  dir(`gdrgate-startup-${process.pid}-AbC123`);
  dir(`gdrgate-startup-${dead}-Zz9999`, 0o755);
  dir(`gdrgate-startup-${dead}-toolongname`);
  dir(`other-${dead}-AbC123`);
  writeFileSync(path.join(tmp, `gdrgate-startup-${dead}-File00`), 'x');
  mkdirSync(path.join(tmp, 'target'), { mode: 0o700 });
  symlinkSync(path.join(tmp, 'target'), path.join(tmp, `gdrgate-startup-${dead}-Link00`));
  const before = readdirSync(tmp).sort();
  t.same(sweepWorkDirs(tmp, uid), [gone]);
  t.same(readdirSync(tmp).sort(), before.filter((n) => n !== gone), 'the live, our own, the open, the misnamed, the file and the link stay');
  t.same(sweepWorkDirs(tmp, uid + 1), [], "another user's: never");
  t.same(sweepWorkDirs(path.join(tmp, 'none'), uid), [], 'no TMPDIR: nothing to do');
});

// A leftover that cannot be removed (here a mount inside it, in a mount namespace of the test's own) is left, and
// the sweep goes on: it threw, and startup-snapshot then failed on every run.
t.test('a leftover that cannot be removed: left, the others swept, no throw', { skip: uid !== 0 || !existsSync('/usr/bin/unshare') ? 'needs root and unshare for a mount' : false }, async (t) => {
  const tmp = scratchDir('gdrgate-work-busy-');
  const dead = deadPid();
  for (const n of ['Busy00', 'Free00']) mkdirSync(path.join(tmp, `gdrgate-startup-${dead}-${n}`, 'sub'), { recursive: true, mode: 0o700 });
  for (const n of ['Busy00', 'Free00']) chmodSync(path.join(tmp, `gdrgate-startup-${dead}-${n}`), 0o700);
  const busy = path.join(tmp, `gdrgate-startup-${dead}-Busy00`, 'sub');
  const sweep = `import(${JSON.stringify(path.join(REPO, 'dist/startup/work-dir.js'))}).then((m) => console.log(JSON.stringify(m.sweepWorkDirs(${JSON.stringify(tmp)}, 0))))`;
  const r = spawnSync('/usr/bin/unshare', ['-m', '--propagation', 'private', '/bin/sh', '-c', `/bin/mount -t tmpfs none ${busy} && ${process.execPath} -e '${sweep}'; echo "rc=$?"; ls ${tmp}`], { encoding: 'utf8', timeout: 60_000 });
  t.equal(r.stdout, `["gdrgate-startup-${dead}-Free00"]\nrc=0\ngdrgate-startup-${dead}-Busy00\n`, r.stderr);
});

t.test('SIGTERM mid-build: the work directory goes, and the build ends by that signal', async (t) => {
  const tmp = scratchDir('gdrgate-work-term-');
  const out = path.join(scratchDir('gdrgate-work-out-'), 'gate.blob');
  const child = spawn(process.execPath, [PROGRAM, 'startup-snapshot', '--out', out, '--warm-up', CAPTURE], { env: { ...process.env, TMPDIR: tmp }, stdio: 'ignore' });
  const ended = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, sig) => resolve(sig ?? code)));
  // Until its work directory holds the warm-up's first file: the build is under way.
  const work = new RegExp(`^gdrgate-startup-${child.pid}-`);
  for (let i = 0; i < 600 && !readdirSync(tmp).some((n) => work.test(n) && readdirSync(path.join(tmp, n)).length > 0); i++) await new Promise((r) => setTimeout(r, 50));
  t.equal(readdirSync(tmp).filter((n) => work.test(n)).length, 1, 'the build made its work directory');
  child.kill('SIGTERM');
  t.equal(await ended, 'SIGTERM');
  t.same(readdirSync(tmp), [], 'nothing left in TMPDIR');
  t.notOk(existsSync(out), 'no blob');
});

t.test('killed outright: the next build sweeps what it left', async (t) => {
  const tmp = scratchDir('gdrgate-work-kill-');
  const left = path.join(tmp, `gdrgate-startup-${deadPid()}-Left00`);
  mkdirSync(left, { mode: 0o700 });
  writeFileSync(path.join(left, 'built.blob'), Buffer.alloc(1 << 20));
  // --if-needed on a current blob returns before it builds: the sweep comes first all the same.
  const dir = scratchDir('gdrgate-work-next-');
  const blob = path.join(dir, 'gate.blob');
  copyFileSync(path.join(REPO, 'dist/gate.blob'), blob);
  const r = spawnSync(process.execPath, [PROGRAM, 'startup-snapshot', '--if-needed', '--out', blob, '--warm-up', CAPTURE], { encoding: 'utf8', env: { ...process.env, TMPDIR: tmp }, timeout: 300_000 });
  t.same([r.status, r.stdout.endsWith(': up to date (' + spawnSync(process.execPath, [PROGRAM, '--version'], { encoding: 'utf8' }).stdout.trim() + ')\n')], [0, true], r.stderr);
  t.same(readdirSync(tmp), [], 'swept');
});

t.test('as root, a blob the wrappers would never start is not built', { skip: uid !== 0 ? 'the check is made as root only' : false }, async (t) => {
  const dir = scratchDir('gdrgate-work-open-');
  const open = path.join(dir, 'var-lib');
  mkdirSync(open);
  chmodSync(open, 0o775);
  const tmp = scratchDir('gdrgate-work-tmp-');
  const r = spawnSync(process.execPath, [PROGRAM, 'startup-snapshot', '--out', path.join(open, 'gate.blob'), '--warm-up', CAPTURE], { encoding: 'utf8', env: { ...process.env, TMPDIR: tmp }, timeout: 60_000 });
  t.same([r.status, r.stdout], [2, ''], 'a configuration error (an admin fixes it), nothing printed');
  t.equal(r.stderr.trim().split('\n').pop(), `gdrgate: not making ${path.join(open, 'gate.blob')}: the Slurm wrappers start only a startup snapshot that root alone can change, and ${open} is writable by its group (mode 775)`);
  t.same([readdirSync(open), readdirSync(tmp)], [[], []], 'nothing built, nothing written');
});
