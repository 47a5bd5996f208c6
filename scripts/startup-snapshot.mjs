// Bundles the gate as one CommonJS script with every dependency inside (dist/gate-snapshot.cjs, the only form
// `node --build-snapshot` takes), then makes the blob from it (scripts/build-blob.mjs). The JSON Schema
// validators are compiled into the bundle (ajv standalone); ajv's compiler is left out of it, and so is execa
// (only a failing gate runs scontrol): dist/execa.cjs, loaded from beside the blob when a drain needs it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { validatorSource } from './validators.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The gate validates its config and baseline; the report schema is for consumers of --json output (and tests).
const names = ['baseline', 'config'];

const plugins = [
  {
    // `gdrgate-validator:<name>`: the schema's validator as a CommonJS module (no file to import at run time).
    name: 'validators',
    setup(b) {
      b.onResolve({ filter: /^gdrgate-validator:/ }, (a) => ({ path: a.path.slice('gdrgate-validator:'.length), namespace: 'validator' }));
      b.onLoad({ filter: /.*/, namespace: 'validator' }, (a) => ({ contents: validatorSource(a.path, { esm: false }), loader: 'js', resolveDir: root }));
    },
  },
  {
    // The run-time schema compiler (schema.ts's fallback when no precompiled validator exists) is never reached here.
    name: 'no-ajv-compiler',
    setup(b) {
      b.onResolve({ filter: /^ajv\/dist\/2020\.js$/ }, () => ({ path: 'ajv-compiler', namespace: 'absent' }));
      b.onLoad({ filter: /.*/, namespace: 'absent' }, () => ({
        contents: "throw new Error('the startup snapshot carries precompiled validators only');",
        loader: 'js',
      }));
    },
  },
];

// Runs in the deserialized process, on first use: the blob's own path is in execArgv (--snapshot-blob FILE).
const EXECA_BESIDE_BLOB = `
const path = require('node:path');
const { createRequire } = require('node:module');
const a = process.execArgv;
const i = a.findIndex((x) => x === '--snapshot-blob' || x.startsWith('--snapshot-blob='));
if (i < 0) throw new Error('execa: this bundle runs only from gate.blob');
const blob = a[i].includes('=') ? a[i].slice(a[i].indexOf('=') + 1) : a[i + 1];
module.exports = createRequire(path.resolve(blob))('./execa.cjs');
`;
plugins.push({
  name: 'execa-beside-blob',
  setup(b) {
    b.onResolve({ filter: /^execa$/ }, () => ({ path: 'execa', namespace: 'beside-blob' }));
    b.onLoad({ filter: /.*/, namespace: 'beside-blob' }, () => ({ contents: EXECA_BESIDE_BLOB, loader: 'js' }));
  },
});

// pino's transports (worker threads that run other modules) are never used by the gate, which logs to a file
// descriptor: they stay out of the blob, and so do worker_threads and module, which Node does not support in a
// startup snapshot. The gate is never a worker thread: isMainThread is true.
plugins.push({
  name: 'pino-without-transports',
  setup(b) {
    b.onResolve({ filter: /^\.\/(lib\/)?transport$/ }, (a) => (/[\\/]pino[\\/]/.test(a.importer) ? { path: 'transport', namespace: 'pino-stub' } : undefined));
    b.onResolve({ filter: /^worker_threads$/ }, (a) => (/[\\/]pino[\\/]/.test(a.importer) ? { path: 'worker_threads', namespace: 'pino-stub' } : undefined));
    b.onLoad({ filter: /^transport$/, namespace: 'pino-stub' }, () => ({
      contents: "module.exports = function transport() { throw new Error('pino transports are not part of the gate'); };",
      loader: 'js',
    }));
    b.onLoad({ filter: /^worker_threads$/, namespace: 'pino-stub' }, () => ({ contents: 'module.exports = { isMainThread: true };', loader: 'js' }));
  },
});

const entry = [
  "import { prepareSnapshot } from './src/cli/startup-snapshot.ts';",
  ...names.map((n) => `import ${n} from 'gdrgate-validator:${n}';`),
  `prepareSnapshot({ ${names.join(', ')} }, process.env.GDRGATE_SNAPSHOT_WARMUP);`,
].join('\n');

const made = await build({
  stdin: { contents: entry, resolveDir: root, sourcefile: 'gate-snapshot-entry.ts', loader: 'ts' },
  outfile: path.join(root, 'dist/gate-snapshot.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  plugins,
  // schema.ts finds the package through import.meta.url only in its compile fallback, absent here.
  logOverride: { 'empty-import-meta': 'silent' },
  // Smaller source, smaller blob, faster start (~3 ms of ~58 here); names stay as written, for stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  metafile: !!process.env.GDRGATE_METAFILE,
  logLevel: 'warning',
  legalComments: 'none',
});

if (made.metafile) {
  const by = {};
  for (const [f, v] of Object.entries(Object.values(made.metafile.outputs)[0].inputs)) {
    const k = f.includes('node_modules/') ? f.split('node_modules/')[1].split('/')[0] : f.split(':')[0].split('/')[0];
    by[k] = (by[k] ?? 0) + v.bytesInOutput;
  }
  console.log(Object.entries(by).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join('\n'));
}

await build({
  stdin: { contents: "export { execa } from 'execa';", resolveDir: root, sourcefile: 'execa-entry.js', loader: 'js' },
  outfile: path.join(root, 'dist/execa.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  legalComments: 'none',
});

// The blob's second warm-up node (scripts/build-blob.mjs): the test generator's DGX-1 tree (PLX switches, ConnectX
// NICs, ACS), so the code a switched multi-GPU node runs is compiled in the blob too, not only the bundled capture's.
await build({
  stdin: {
    contents: [
      "export { buildTree } from './test/gen/sysfs-tree.ts';",
      "import { node as dgx1, source } from './test/gen/topologies/dgx1v-8xv100-4nic.ts';",
      '// With nvidia_peermem loaded, as a DGX-1 running NCCL over InfiniBand has it: every warm-up prolog passes.',
      'export const node = { ...dgx1, peermem: true };',
      'export { source };',
    ].join('\n'),
    resolveDir: root,
    sourcefile: 'warm-up-tree-entry.ts',
    loader: 'ts',
  },
  outfile: path.join(root, 'dist/warm-up-tree.mjs'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  legalComments: 'none',
});

await import('./build-blob.mjs');
