// A startup snapshot serves its program only while the program holds the same bytes: a rebuild of the same size and
// modification time (dpkg-deb and rpmbuild clamp every file's mtime to SOURCE_DATE_EPOCH, so two builds of one commit
// differ in content alone) is stale (exit 10), and `startup-snapshot --if-needed` remakes its blob; the same bytes
// under another modification time (a reinstall, a copy) are still the blob's program. The program is known by the
// build id `npm run build` writes as its first line (src/startup/build-id.ts), and its size.
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';
import { sealBlob } from '../helpers/seal.js';
import { stampBuildId } from '../../src/startup/build-id.js';

const CAPTURE = path.join(REPO, 'examples/h200-vm.tar.gz');
// The commit time a reproducible build clamps every file's mtime to (SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)).
const EPOCH = 1796640666;
const dir = scratchDir('gdrgate-blob-identity-');
const program = path.join(dir, 'gdrgate.cjs');
const blob = path.join(dir, 'gate.blob');
const built = readFileSync(path.join(REPO, 'dist/gdrgate.cjs'), 'utf8');
/** The program as a build of the same commit with one change gives it: its bytes, and the clamped modification time. */
const install = (text: string, mtime = EPOCH): void => {
  writeFileSync(program, text);
  utimesSync(program, mtime, mtime);
};
const fromBlob = (args: string[]) => {
  const r = spawnSync(process.execPath, ['--snapshot-blob', blob, ...args], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', GDRGATE_CLI: program }, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const stale = { code: 10, stdout: '', stderr: `gdrgate: the startup snapshot is stale (${program} changed since it was made); remake it: gdrgate startup-snapshot\n` };

install(built);
t.equal(spawnSync(process.execPath, ['--snapshot-blob', blob, '--build-snapshot', program], { timeout: 300_000 }).status, 0, 'the blob is made of the program');
sealBlob(blob);
const report = fromBlob(['check', '--root', CAPTURE]);

t.test('a rebuild with other bytes, the same size and the same modification time: stale, its own code judges', async (t) => {
  t.equal(report.code, 0, report.stderr);
  t.equal(report.stdout.split('\n')[0]!.split(' ')[0], 'gdrgate', 'the blob of the first build judges');
  t.equal(built.split('`gdrgate ${').length > 1, true, 'the report line is built in the bundle');
  const rebuilt = stampBuildId(built.replaceAll('`gdrgate ${', '`GDRGATE ${'));
  install(rebuilt);
  t.same([statSync(program).size, statSync(program).mtimeMs], [Buffer.byteLength(built), EPOCH * 1000], 'the size and modification time of the first build');
  t.same(fromBlob(['check', '--root', CAPTURE]), stale, 'never the first build’s code');
  const own = spawnSync(process.execPath, [program, 'check', '--root', CAPTURE], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' }, timeout: 120_000 });
  t.equal(own.stdout, report.stdout.replace(/^gdrgate /, 'GDRGATE '), 'what the plain program then says');
});

t.test('startup-snapshot --if-needed remakes the blob of such a rebuild', async (t) => {
  install(stampBuildId(built.replaceAll('`gdrgate ${', '`GDRGATE ${')));
  const r = spawnSync(process.execPath, [program, 'startup-snapshot', '--if-needed', '--out', blob, '--warm-up', CAPTURE], { encoding: 'utf8', timeout: 300_000 });
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout.startsWith(`${blob}: startup snapshot of ${program} (`), true, r.stdout);
  t.equal(fromBlob(['check', '--root', CAPTURE]).stdout, report.stdout.replace(/^gdrgate /, 'GDRGATE '), 'the new blob judges with the rebuild’s code');
});

t.test('the same bytes under another modification time: still the blob’s program', async (t) => {
  install(stampBuildId(built.replaceAll('`gdrgate ${', '`GDRGATE ${')), EPOCH + 86_400);
  t.equal(fromBlob(['check', '--root', CAPTURE]).stdout, report.stdout.replace(/^gdrgate /, 'GDRGATE '));
  t.equal(fromBlob(['version']).code, 0);
});

t.test('the build line: the sha256 of the code after it; an edit by hand that keeps it but not the size: stale', async (t) => {
  t.equal(stampBuildId(built), built, 'dist/gdrgate.cjs carries its own id');
  t.equal(built.slice(0, 24), '// gdrgate-build sha256:', 'its first line');
  const current = readFileSync(program, 'utf8');
  install(current.replace('`GDRGATE ${', '`GDRGATE! ${'), EPOCH + 86_400);
  t.same(fromBlob(['version']), stale);
});
