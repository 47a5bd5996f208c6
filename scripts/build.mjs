// `npm run build` after tsc and the check enum: the precompiled validators for the modules shape, the bundles
// (scripts/shapes.mjs) and the checkout's startup snapshot dist/gate.blob, made by the program itself as on a node.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { SHAPES } from './shapes.mjs';
import { validatorSource } from './validators.mjs';

// The modules shape: dist/validators/*.js beside tsc's output (the generated ESM still calls require() for ajv's
// run-time helpers: give it one).
mkdirSync('dist/validators', { recursive: true });
for (const name of ['baseline', 'config', 'report', 'fleet-summary']) {
  const code = validatorSource(name, { esm: true }).replace(/^"use strict";/, '');
  const head = code.includes('require(') ? "import { createRequire } from 'node:module';const require = createRequire(import.meta.url);\n" : '';
  writeFileSync(`dist/validators/${name}.js`, head + code);
}

rmSync('dist/chunks', { recursive: true, force: true }); // chunk names carry hashes: drop stale ones
await Promise.all(Object.values(SHAPES).map((s) => build(s)));
chmodSync('dist/cli.js', 0o755);
// The one-file program is started by a Node (the packages' /usr/sbin/gdrgate, the wrappers), never by itself: no #! line.
for (const f of ['dist/gdrgate.cjs', 'dist/fleet-read-worker.cjs', 'dist/config-read-worker.cjs']) writeFileSync(f, readFileSync(f, 'utf8').replace(/^#!.*\n/, ''));
// Its first line is its build id (src/startup/build-id.ts): a startup snapshot knows its own program by it.
const { stampBuildId } = await import(pathToFileURL(path.resolve('dist/startup/build-id.js')).href);
writeFileSync('dist/gdrgate.cjs', stampBuildId(readFileSync('dist/gdrgate.cjs', 'utf8')));

// The blob, warmed up on the bundled capture and the generated DGX-1 tree, made as `gdrgate startup-snapshot` makes
// it on a node; skipped with GDRGATE_NO_BLOB=1 (the wrappers then run the program).
if (process.env.GDRGATE_NO_BLOB !== '1') {
  const tmp = mkdtempSync(path.join(tmpdir(), 'gdrgate-build-'));
  try {
    const { buildTree, node } = await import(pathToFileURL(path.resolve('dist/warm-up-tree.mjs')).href);
    await buildTree(path.join(tmp, 'dgx1'), node);
    const capture = existsSync('examples/h200-vm') ? 'examples/h200-vm' : 'examples/h200-vm.tar.gz';
    const args = ['dist/gdrgate.cjs', 'startup-snapshot', '--out', 'dist/gate.blob', '--warm-up', capture, '--warm-up', path.join(tmp, 'dgx1')];
    const r = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 300_000 });
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stdout}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
