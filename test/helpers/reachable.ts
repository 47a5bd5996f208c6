// What a test runs as another uid must lie where that uid can reach it: a clone under a 0700 directory (root's
// home on Debian) cannot be traversed by the job user. A copy of the build (dist, schemas, package.json and the
// production dependencies it loads from node_modules) under a directory of the test's, world-readable.
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
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
  return [...seen].map((d) => path.relative(REPO, d));
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
