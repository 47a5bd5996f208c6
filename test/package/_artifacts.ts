// What the packaging tests share (not a test file): the artifacts of `npm run package` for both architectures
// (built here, once per set of sources), their trees unpacked, commands run with a bound, and which Debian tools
// this machine has.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO } from '../helpers/paths.js';

export const OUT = path.join(REPO, 'dist/package');
/** The GPU of the bundled H200 capture, as every artifact's copy of it must still show. */
export const H200_GPU = /PASS\s+pcie-link\s+0000:00:06\.0\s+GPU H200 Gen5 x16 of Gen5 x16/;

export interface Ran {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function run(cmd: string, args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Ran {
  const r = spawnSync(cmd, args, { cwd: opts.cwd ?? REPO, env: opts.env ?? process.env, encoding: 'utf8', timeout: opts.timeoutMs ?? 300_000, maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: `${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

export const has = (tool: string): boolean => run('/bin/sh', ['-c', `command -v ${tool}`]).status === 0;

/** Tools the packaging needs, absent here: a skip reason outside CI (in CI their absence fails the test). */
export function missing(tools: readonly string[]): string | undefined {
  const absent = tools.filter((t) => !has(t));
  if (!absent.length) return undefined;
  if (process.env.CI) throw new Error(`CI lacks ${absent.join(', ')} (.ci/run installs them)`);
  return `needs ${absent.join(', ')} (apt-get install ${absent.map((t) => (t === 'rpmbuild' ? 'rpm' : t)).join(' ')})`;
}

export interface Artifacts {
  readonly deb: string;
  readonly rpm: string;
  readonly debArm64: string;
  readonly rpmArm64: string;
}

/** dist/package/*.{deb,rpm} of both architectures, made now unless they were made from these very sources. */
export function artifacts(): Artifacts {
  const version = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
  const a: Artifacts = {
    deb: path.join(OUT, `gdrgate_${version}-1_amd64.deb`),
    rpm: path.join(OUT, `gdrgate-${version}-1.x86_64.rpm`),
    debArm64: path.join(OUT, `gdrgate_${version}-1_arm64.deb`),
    rpmArm64: path.join(OUT, `gdrgate-${version}-1.aarch64.rpm`),
  };
  // One build for every packaging test of a run: tap runs two files at once, so the first takes the lock and builds
  // (scripts/package.mjs --if-changed: nothing when dist/package/inputs.sha256 still matches the sources, as after
  // `npm run package`), the other waits and then finds them made.
  withLock(path.join(OUT, '.lock'), () => {
    const r = run(process.execPath, ['scripts/package.mjs', '--if-changed'], { timeoutMs: 1_200_000 });
    if (r.status !== 0) throw new Error(`npm run package failed:\n${r.stdout}\n${r.stderr}`);
  });
  return a;
}

const sleep = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** `fn` while holding `dir` (mkdir is atomic); a lock whose process is gone is taken over. */
function withLock(dir: string, fn: () => void): void {
  mkdirSync(path.dirname(dir), { recursive: true });
  for (;;) {
    try {
      mkdirSync(dir);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (!held(dir)) rmSync(dir, { recursive: true, force: true });
      else sleep(500);
    }
  }
  try {
    writeFileSync(path.join(dir, 'pid'), String(process.pid));
    fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether the lock's process still runs (a lock without its pid yet counts as held for a minute). */
function held(dir: string): boolean {
  try {
    process.kill(Number(readFileSync(path.join(dir, 'pid'), 'utf8')), 0);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EPERM') return true;
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return false;
    try {
      return Date.now() - statSync(dir).mtimeMs < 60_000;
    } catch {
      return true; // gone meanwhile: try again
    }
  }
}

/** A .deb's files under a fresh directory, and the command that runs its gdrgate there: its Node on its program. */
export function unpackDeb(deb: string, under = tmpdir()): { root: string; gdrgate: string[] } {
  const root = mkdtempSync(path.join(under, 'gdrgate-unpacked-'));
  const r = run('dpkg-deb', ['-x', deb, root]);
  if (r.status !== 0) throw new Error(r.stderr);
  return { root, gdrgate: [path.join(root, 'usr/lib/gdrgate/node'), path.join(root, 'usr/lib/gdrgate/gdrgate.cjs')] };
}

/** Paths as both package tools list them: absolute, no trailing slash, no "./" or "/" entry. */
export function debPaths(deb: string): { files: string[]; dirs: string[] } {
  const lines = run('dpkg-deb', ['-c', deb]).stdout.trim().split('\n');
  const files: string[] = [];
  const dirs: string[] = [];
  for (const l of lines) {
    const name = l.split(/\s+/).slice(5).join(' ').split(' -> ')[0]!.replace(/^\./, '').replace(/\/$/, '');
    if (!name) continue;
    (l.startsWith('d') ? dirs : files).push(name);
  }
  return { files, dirs };
}

export const dpkg = (...args: string[]): Ran => run('dpkg', args, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeoutMs: 120_000 });
export const isInstalled = (): boolean => run('dpkg-query', ['-W', 'gdrgate']).status === 0;

/**
 * For a test that installs the .deb on this machine: gdrgate not installed at the start (purged if it was), and
 * gdrgate's own data directories that something else made before (tests on a shared machine) put aside, so that a
 * purge cannot take them; at the end `teardown` purges the package and puts them back.
 */
export function installScope(teardown: (fn: () => void) => void): void {
  if (isInstalled()) dpkg('--purge', 'gdrgate');
  const aside = ['/var/lib/gdrgate', '/var/log/gdrgate', '/run/gdrgate'].filter((p) => existsSync(p)).map((p) => [p, `${p}.aside.${process.pid}`] as const);
  for (const [p, q] of aside) renameSync(p, q);
  teardown(() => {
    if (isInstalled()) dpkg('--purge', 'gdrgate');
    for (const [p, q] of aside) if (!existsSync(p)) renameSync(q, p);
  });
}
