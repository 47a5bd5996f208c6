// After tsc: make the CLI executable and precompile the JSON Schema validators (ajv standalone), so a
// prolog never compiles a schema at start (that alone cost ~200 ms per run).
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';

chmodSync(new URL('../dist/cli.js', import.meta.url), 0o755);
mkdirSync(new URL('../dist/validators/', import.meta.url), { recursive: true });
for (const name of ['baseline', 'config', 'report']) {
  const schema = JSON.parse(readFileSync(new URL(`../schemas/${name}.schema.json`, import.meta.url), 'utf8'));
  const ajv = new Ajv2020({ allErrors: true, strict: true, code: { source: true, esm: true } });
  const validate = ajv.compile(schema);
  // The generated ESM still calls require() for ajv's runtime helpers (ucs2length): give it one.
  const code = standaloneCode(ajv, validate).replace(/^"use strict";/, '');
  const head = code.includes('require(') ? "import { createRequire } from 'node:module';const require = createRequire(import.meta.url);\n" : '';
  writeFileSync(new URL(`../dist/validators/${name}.js`, import.meta.url), head + code);
}
