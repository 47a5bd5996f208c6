// After tsc: make the CLI executable and precompile the JSON Schema validators (ajv standalone), so a
// prolog never compiles a schema at start (that alone cost ~200 ms per run).
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { validatorSource } from './validators.mjs';

chmodSync(new URL('../dist/cli.js', import.meta.url), 0o755);
mkdirSync(new URL('../dist/validators/', import.meta.url), { recursive: true });
for (const name of ['baseline', 'config', 'report']) {
  // The generated ESM still calls require() for ajv's runtime helpers (ucs2length): give it one.
  const code = validatorSource(name, { esm: true }).replace(/^"use strict";/, '');
  const head = code.includes('require(') ? "import { createRequire } from 'node:module';const require = createRequire(import.meta.url);\n" : '';
  writeFileSync(new URL(`../dist/validators/${name}.js`, import.meta.url), head + code);
}
