// Bundles the CLI with esbuild: one entry file plus lazily loaded chunks, so a prolog loads a handful of
// files instead of a hundred modules. Runs after tsc (which type-checks and emits the modules tests use).
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

rmSync('dist/chunks', { recursive: true, force: true }); // chunk names carry hashes: drop stale ones

await build({
  entryPoints: { cli: 'src/cli.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  // Bundled CommonJS dependencies (pino, yargs helpers) call require(); give them one.
  banner: { js: "import { createRequire as __gdrCreateRequire } from 'node:module'; const require = __gdrCreateRequire(import.meta.url);" },
  logLevel: 'warning',
  legalComments: 'none',
});
