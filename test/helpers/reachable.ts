// What a test runs as another uid must lie where that uid can reach it: a clone under a 0700 directory (root's
// home on Debian) cannot be traversed by the job user. A copy of the build (dist, schemas, package.json and the
// production dependencies it loads from node_modules) under a directory of the test's, world-readable.
import { chmodSync, copyFileSync, cpSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO } from './paths.js';

interface Manifest {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
const manifest = (dir: string): Manifest => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;
const depsOf = (dir: string): string[] => {
  const m = manifest(dir);
  return [...Object.keys(m.dependencies ?? {}), ...Object.keys(m.optionalDependencies ?? {})];
};

/** The package directories (relative to REPO) that REPO's dependencies need, as node would resolve them. */
function productionPackages(): string[] {
  const seen = new Set<string>();
  const todo: [string, string][] = depsOf(REPO).map((d) => [REPO, d]);
  for (let next = todo.pop(); next; next = todo.pop()) {
    const [from, dep] = next;
    // Node looks in node_modules beside the requiring package first, then in each directory above it.
    let dir: string | null = null;
    for (let d = from; d.startsWith(REPO) && dir === null; d = path.dirname(d)) if (existsSync(path.join(d, 'node_modules', dep, 'package.json'))) dir = path.join(d, 'node_modules', dep);
    if (dir === null || seen.has(dir)) continue; // an optional dependency not installed here
    seen.add(dir);
    for (const d of depsOf(dir)) todo.push([dir, d]);
  }
  // Node itself (node-linux-<arch>, an optional dependency for the project's own runtime) is not what the build
  // loads: reachableNode gives the other uid a Node of its own.
  return [...seen].map((d) => path.relative(REPO, d)).filter((d) => !/(^|[\\/])node-linux-[^\\/]+$/.test(d));
}

/** Directories 0755, files 0644 (0755 when executable by their owner): a umask-077 clone reads 0600. */
function openUp(p: string): void {
  const st = lstatSync(p);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    chmodSync(p, 0o755);
    for (const e of readdirSync(p)) openUp(path.join(p, e));
  } else chmodSync(p, st.mode & 0o100 ? 0o755 : 0o644);
}

/** Copies the build into `dir`/gdrgate (every parent of `dir` must already be reachable); returns its dist/cli.js. */
export function reachableBuild(dir: string): string {
  const pkg = path.join(dir, 'gdrgate');
  mkdirSync(pkg, { recursive: true });
  for (const p of ['dist', 'schemas', 'package.json', ...productionPackages()]) cpSync(path.join(REPO, p), path.join(pkg, p), { recursive: true, verbatimSymlinks: true });
  openUp(pkg);
  return path.join(pkg, 'dist/cli.js');
}

/** Whether any user can reach `file`: every directory above it can be entered by others. */
function reachable(file: string): boolean {
  for (let d = path.dirname(file); ; d = path.dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) return false;
    if (d === path.dirname(d)) return true;
  }
}

/**
 * A Node the other uid can start, for the build `reachableBuild` returned `cli` of: this process's Node when anyone
 * can reach it, else that same binary linked (or copied, across file systems) into the reachable build's bin/.
 * The project's Node lives in node_modules, inside the clone: under a 0700 home only root reaches it.
 */
export function reachableNode(cli: string): string {
  const real = realpathSync(process.execPath);
  if (reachable(real)) return real;
  const bin = path.join(path.dirname(path.dirname(cli)), 'bin');
  const node = path.join(bin, 'node');
  mkdirSync(bin, { recursive: true, mode: 0o755 });
  chmodSync(bin, 0o755);
  if (!existsSync(node)) {
    try {
      linkSync(real, node);
    } catch {
      copyFileSync(real, node);
    }
  }
  chmodSync(node, 0o755);
  return node;
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The reachable build (`cli`, with a reachable `node`) as Slurm starts a hook: cwd /, only PATH and `env`, as `uid` when
 * given. Through env(1) -u NODE_OPTIONS: tap's processinfo puts its NODE_OPTIONS (an --import from the checkout's
 * node_modules) back into every child's environment, and the job user cannot load it from a 0700 home.
 */
export function runBuilt(node: string, cli: string, args: readonly string[], env: Record<string, string>, uid?: number): Ran {
  const r = spawnSync('/usr/bin/env', ['-u', 'NODE_OPTIONS', node, cli, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    timeout: 60_000,
    cwd: '/',
    ...(uid !== undefined ? { uid, gid: uid } : {}),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
