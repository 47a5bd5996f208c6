// The shapes gdrgate is built in, declared once (`npm run build` makes all of them, scripts/build.mjs):
//   modules  tsc's output, dist/**/*.js (tests and bench import it; `node dist/cli/run.js`'s runCli)
//   esm      dist/cli.js: the ESM bundle a checkout runs (npm start, the wrappers' CLI= in a checkout), commands
//            loaded lazily from dist/chunks/; the fleet's worker dist/fleet-read-worker.js, the agent's
//            dist/config-read-worker.js
//   program  dist/gdrgate.cjs: every command and dependency in one CommonJS file, the form `node --build-snapshot`
//            takes and the one the packages install (/usr/lib/gdrgate/gdrgate.cjs, with the pinned Node beside it);
//            its workers dist/fleet-read-worker.cjs and dist/config-read-worker.cjs
//   blob     a V8 startup snapshot of `program`, made where it runs (`gdrgate startup-snapshot`); in a checkout
//            dist/gate.blob, warmed up on the bundled capture and a generated DGX-1 tree
// Every bundle is built from the same entry (src/cli.ts), for every architecture (the bundles are JavaScript; the
// architecture is only the Node binary the packages carry, scripts/runtime.mjs). test/startup/shapes.test.ts runs
// `check` on the bundled capture in each shape and compares the output byte for byte.
import { validatorSource } from './validators.mjs';

const NODE_TARGET = 'node24';

/** `src/validators.ts` replaced by the schemas' precompiled validators (ajv standalone): no file to load. */
const validators = {
  name: 'validators',
  setup(b) {
    b.onResolve({ filter: /^\.\/validators\.js$/ }, (a) => (/[\\/]src[\\/]schema\.ts$/.test(a.importer) ? { path: 'precompiled', namespace: 'gdrgate-validators' } : undefined));
    b.onResolve({ filter: /^gdrgate-validator:/ }, (a) => ({ path: a.path.slice('gdrgate-validator:'.length), namespace: 'gdrgate-validator' }));
    b.onLoad({ filter: /.*/, namespace: 'gdrgate-validators' }, () => ({
      contents:
        ['baseline', 'config', 'report', 'fleet-summary'].map((n, i) => `import v${i} from 'gdrgate-validator:${n}';`).join('\n') +
        "\nexport const PRECOMPILED = { baseline: v0, config: v1, report: v2, 'fleet-summary': v3 };\n",
      loader: 'js',
    }));
    b.onLoad({ filter: /.*/, namespace: 'gdrgate-validator' }, (a) => ({ contents: validatorSource(a.path, { esm: false }), loader: 'js', resolveDir: process.cwd() }));
  },
};

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

// ajv's run-time compiler (src/schema.ts's fallback, never reached with precompiled validators) and pino's
// transports (worker threads running other files; gdrgate logs to a file descriptor) stay out of every bundle.
const plugins = [
  validators,
  stub('ajv-compiler', /^ajv\/dist\/2020\.js$/, /./, "throw new Error('gdrgate carries precompiled validators only');"),
  stub('pino-transport', /^\.\/(lib\/)?transport$/, /[\\/]pino[\\/]/, "module.exports = function transport() { throw new Error('pino transports are not part of gdrgate'); };"),
];

const common = { bundle: true, platform: 'node', target: NODE_TARGET, plugins, logLevel: 'warning', legalComments: 'none' };

export const SHAPES = {
  esm: {
    ...common,
    entryPoints: { cli: 'src/cli.ts', 'fleet-read-worker': 'src/fleet/read-worker.ts', 'config-read-worker': 'src/host/config-read-worker.ts' },
    outdir: 'dist',
    format: 'esm',
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    // Bundled CommonJS dependencies (pino, yargs helpers) call require(); give them one.
    banner: { js: "import { createRequire as __gdrCreateRequire } from 'node:module'; const require = __gdrCreateRequire(import.meta.url);" },
  },
  program: {
    ...common,
    // pino asks worker_threads whether it runs in one; Node warns about that module in a startup snapshot, and
    // gdrgate is never a worker thread that logs.
    plugins: [...plugins, stub('worker_threads', /^(node:)?worker_threads$/, /[\\/]pino[\\/]/, 'module.exports = { isMainThread: true };')],
    entryPoints: { gdrgate: 'src/cli.ts', 'fleet-read-worker': 'src/fleet/read-worker.ts', 'config-read-worker': 'src/host/config-read-worker.ts' },
    outdir: 'dist',
    outExtension: { '.js': '.cjs' },
    format: 'cjs',
    // import.meta.url (the agent watches its own file; startup-snapshot finds the program; the fleet its worker) is
    // the bundle's own file.
    define: { 'import.meta.url': '__gdrgateSelfUrl' },
    banner: { js: "var __gdrgateSelfUrl = require('node:url').pathToFileURL(__filename).href;" },
    // Smaller source, smaller blob, faster start; names stay as written, for stack traces.
    minifyWhitespace: true,
    minifySyntax: true,
  },
  // The blob's second warm-up tree in a checkout: the test generator's DGX-1 (PLX switches, ConnectX NICs, ACS).
  'warm-up-tree': {
    ...common,
    plugins: [],
    stdin: {
      contents: [
        "export { buildTree } from './test/gen/sysfs-tree.ts';",
        "import { node as dgx1, source } from './test/gen/topologies/dgx1v-8xv100-4nic.ts';",
        '// With nvidia_peermem loaded, as a DGX-1 running NCCL over InfiniBand has it: every warm-up prolog passes.',
        'export const node = { ...dgx1, peermem: true };',
        'export { source };',
      ].join('\n'),
      resolveDir: process.cwd(),
      sourcefile: 'warm-up-tree-entry.ts',
      loader: 'ts',
    },
    outfile: 'dist/warm-up-tree.mjs',
    format: 'esm',
  },
};
