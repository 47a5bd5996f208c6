// Bundles the CLI with esbuild: one entry file plus lazily loaded chunks, so a prolog loads a handful of
// files instead of a hundred modules. Runs after tsc (which type-checks and emits the modules tests use).
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

rmSync('dist/chunks', { recursive: true, force: true }); // chunk names carry hashes: drop stale ones

const common = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Bundled CommonJS dependencies (pino, yargs helpers) call require(); give them one.
  banner: { js: "import { createRequire as __gdrCreateRequire } from 'node:module'; const require = __gdrCreateRequire(import.meta.url);" },
  logLevel: 'warning',
  legalComments: 'none',
};

// The Slurm gate's path in one file, unsplit: what every job pays for at start-up.
// ajv (only to compile a schema when no precompiled validator exists) and execa (only to run scontrol on
// the failure path) stay outside it: loaded from node_modules when, and only when, they are needed.
await build({ ...common, entryPoints: { gate: 'src/cli/gate.ts' }, outdir: 'dist', splitting: false, external: ['ajv', 'ajv/*', 'execa'] });

await build({
  ...common,
  // The fleet report's read pool starts its workers from this file (src/fleet/read.ts).
  entryPoints: { cli: 'src/cli.ts', 'fleet-read-worker': 'src/fleet/read-worker.ts' },
  outdir: 'dist',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
});
