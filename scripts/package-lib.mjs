// What the packaging scripts share: the repository root, tools found locally or through npx, the esbuild plugins
// that make one self-contained CommonJS bundle of the CLI (scripts/package-sea.mjs).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { validatorSource } from './validators.mjs';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A devDependency's command: node_modules/.bin first, else `npx --yes <name>@<the version package.json pins>`. */
export function findTool(name) {
  const local = path.join(repoRoot, 'node_modules/.bin', name);
  if (existsSync(local)) return [local];
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  const version = pkg.devDependencies?.[name];
  return ['npx', '--yes', version ? `${name}@${version}` : name];
}

/** Stubs a module by name (a filter on its import path, and one on the importer's path) with fixed contents. */
function stub(name, filter, importer, contents) {
  return {
    name,
    setup(b) {
      b.onResolve({ filter }, (a) => (importer.test(a.importer) ? { path: name, namespace: `stub-${name}` } : undefined));
      b.onLoad({ filter: /.*/, namespace: `stub-${name}` }, () => ({ contents, loader: 'js' }));
    },
  };
}

/**
 * `gdrgate-validator:<name>`: the schema's precompiled validator (ajv standalone) as a module; ajv's run-time
 * compiler (src/schema.ts's fallback, never reached with validators provided) and pino's transports (worker
 * threads running other files; gdrgate logs to a file descriptor) left out. `snapshot`: worker_threads too, which
 * Node does not support in a startup snapshot (the gate is never a worker thread).
 */
export function bundlePlugins({ snapshot }) {
  const plugins = [
    {
      name: 'validators',
      setup(b) {
        b.onResolve({ filter: /^gdrgate-validator:/ }, (a) => ({ path: a.path.slice('gdrgate-validator:'.length), namespace: 'validator' }));
        b.onLoad({ filter: /.*/, namespace: 'validator' }, (a) => ({ contents: validatorSource(a.path, { esm: false }), loader: 'js', resolveDir: repoRoot }));
      },
    },
    stub('ajv-compiler', /^ajv\/dist\/2020\.js$/, /./, "throw new Error('gdrgate carries precompiled validators only');"),
    stub('pino-transport', /^\.\/(lib\/)?transport$/, /[\\/]pino[\\/]/, "module.exports = function transport() { throw new Error('pino transports are not part of gdrgate'); };"),
  ];
  if (snapshot) plugins.push(stub('worker_threads', /^(node:)?worker_threads$/, /[\\/]pino[\\/]/, 'module.exports = { isMainThread: true };'));
  return plugins;
}
