// `gdrgate startup-snapshot --if-needed` (the agent unit's ExecStartPre, as root) keeps a blob only when the wrappers would start it: one others can change is never run, and is remade.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';
import { sealBlob } from '../helpers/seal.js';

const PROGRAM = path.join(REPO, 'dist/gdrgate.cjs');
const CAPTURE = path.join(REPO, 'examples/h200-vm.tar.gz');
const version = spawnSync(process.execPath, [PROGRAM, '--version'], { encoding: 'utf8' }).stdout.trim();

/** A copy of the checkout's blob (made of dist/gdrgate.cjs by this Node: current) in a fresh private directory, as `prep` leaves it. */
function ifNeeded(prep: (blob: string) => void): { status: number | null; stdout: string; stderr: string; blob: string; ino: number; was: number } {
  const dir = scratchDir('gdrgate-if-needed-');
  const blob = path.join(dir, 'gate.blob');
  copyFileSync(path.join(REPO, 'dist/gate.blob'), blob);
  prep(blob);
  const was = statSync(blob).ino;
  const r = spawnSync(process.execPath, [PROGRAM, 'startup-snapshot', '--if-needed', '--out', blob, '--warm-up', CAPTURE], { encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, blob, ino: statSync(blob).ino, was };
}

t.test('a current blob that only its owner can change: kept, not remade', async (t) => {
  const r = ifNeeded((b) => chmodSync(b, 0o644));
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout, `${r.blob}: up to date (${version})\n`);
  t.equal(r.ino, r.was, 'the same file');
});

const remade = (blob: string): RegExp => new RegExp(`^${blob.replace(/[.]/g, '\\.')}: startup snapshot of ${PROGRAM.replace(/[.]/g, '\\.')} \\(.*\\), ${version.replace(/[().]/g, '\\$&')}; the one there was not used: .+\n$`);

t.test('a current blob anyone may write: never run, remade with the gate file mode', async (t) => {
  const r = ifNeeded((b) => chmodSync(b, 0o666));
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, remade(r.blob));
  t.equal(statSync(r.blob).mode & 0o7777, 0o644);
  t.not(r.ino, r.was, 'a new file put in its place');
});

t.test("a current blob owned by another user: never run, remade", { skip: process.getuid?.() !== 0 ? 'needs root to give the blob away' : false }, async (t) => {
  const r = ifNeeded((b) => chownSync(b, 65534, 65534));
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, remade(r.blob));
  t.equal(statSync(r.blob).uid, 0);
});

t.test('a blob of another gdrgate that still starts (an upgrade left it): not kept, remade', async (t) => {
  // The same program with another version, made into a blob by this Node: it starts and says "gdrgate 0.0.9-old".
  const old = path.join(scratchDir('gdrgate-if-needed-old-'), 'gdrgate.cjs');
  const text = readFileSync(PROGRAM, 'utf8');
  t.equal(text.split('VERSION="0.1.0"').length, 2, 'the bundle holds its version once');
  writeFileSync(old, text.replace('VERSION="0.1.0"', 'VERSION="0.0.9-old"'));
  const oldBlob = path.join(path.dirname(old), 'old.blob');
  t.equal(spawnSync(process.execPath, ['--snapshot-blob', oldBlob, '--build-snapshot', old], { timeout: 300_000 }).status, 0, 'the old blob is made');
  sealBlob(oldBlob);
  t.equal(spawnSync(process.execPath, ['--snapshot-blob', oldBlob, 'version'], { encoding: 'utf8' }).stdout.trim(), version.replace('gdrgate 0.1.0', 'gdrgate 0.0.9-old'), 'and starts');
  const r = ifNeeded((b) => copyFileSync(oldBlob, b));
  t.equal(r.status, 0, r.stderr);
  t.equal(new RegExp(`^${r.blob.replace(/[.]/g, '\\.')}: startup snapshot of ${PROGRAM.replace(/[.]/g, '\\.')} \\(.*\\), ${version.replace(/[().]/g, '\\$&')}\n$`).test(r.stdout), true, r.stdout);
  t.not(r.ino, r.was, 'a new file put in its place');
  t.equal(spawnSync(process.execPath, ['--snapshot-blob', r.blob, 'version'], { encoding: 'utf8' }).stdout.trim(), version, 'which says this version');
});

t.test('a blob of the same version made of another program (another installation, a hotfix): not kept, remade', async (t) => {
  const other = path.join(scratchDir('gdrgate-if-needed-other-'), 'gdrgate.cjs');
  copyFileSync(PROGRAM, other);
  const otherBlob = path.join(path.dirname(other), 'other.blob');
  t.equal(spawnSync(process.execPath, ['--snapshot-blob', otherBlob, '--build-snapshot', other], { timeout: 300_000 }).status, 0, 'the other blob is made');
  sealBlob(otherBlob);
  t.equal(spawnSync(process.execPath, ['--snapshot-blob', otherBlob, 'version'], { encoding: 'utf8' }).stdout.trim(), version, 'and says this very version');
  const r = ifNeeded((b) => copyFileSync(otherBlob, b));
  t.equal(r.status, 0, r.stderr);
  t.equal(new RegExp(`^${r.blob.replace(/[.]/g, '\\.')}: startup snapshot of ${PROGRAM.replace(/[.]/g, '\\.')} \\(.*\\), ${version.replace(/[().]/g, '\\$&')}\n$`).test(r.stdout), true, r.stdout);
  t.not(r.ino, r.was, 'a new file put in its place');
});

t.test('a current blob cut short at its end (it may still deserialize): not kept, remade', async (t) => {
  const r = ifNeeded((b) => truncateSync(b, statSync(b).size - 1));
  t.equal(r.status, 0, r.stderr);
  t.equal(new RegExp(`^${r.blob.replace(/[.]/g, '\\.')}: startup snapshot of ${PROGRAM.replace(/[.]/g, '\\.')} \\(.*\\), ${version.replace(/[().]/g, '\\$&')}\n$`).test(r.stdout), true, r.stdout);
  t.not(r.ino, r.was, 'a new file put in its place');
});
