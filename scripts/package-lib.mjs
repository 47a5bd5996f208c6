// What the packaging scripts share: the repository root, and the hash of everything a package is made from.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What scripts/package.mjs reads: the built program (not the packages, not this machine's startup snapshot), the
 *  sources it copies or rewrites, the lockfile that pins the carried Node, and the last commit's time (the changelog). */
const INPUTS = ['dist', 'scripts', 'packaging', 'slurm', 'schemas', 'examples/systemd', 'examples/h200-vm.tar.gz', 'package.json', 'package-lock.json'];
const skip = (rel) => rel === 'dist/package' || rel.endsWith('.blob');

function files(rel) {
  if (skip(rel) || !existsSync(path.join(repoRoot, rel))) return [];
  if (!statSync(path.join(repoRoot, rel)).isDirectory()) return [rel];
  return readdirSync(path.join(repoRoot, rel)).sort().flatMap((f) => files(`${rel}/${f}`));
}

/** sha256 over the inputs' names and contents and the build's options: equal keys, equal packages. */
export function inputsKey(options) {
  const h = createHash('sha256');
  h.update(JSON.stringify(options));
  h.update(spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: repoRoot, encoding: 'utf8' }).stdout ?? '');
  for (const f of INPUTS.flatMap(files)) h.update(`\0${f}\0`).update(readFileSync(path.join(repoRoot, f)));
  return h.digest('hex');
}
