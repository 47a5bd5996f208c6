// The JSON Schema validators as standalone code (ajv, draft 2020-12, all errors, strict), for the build:
// ESM files in dist/validators (postbuild.mjs) and CommonJS modules inside the gate's snapshot bundle
// (startup-snapshot.mjs). One place decides how a schema is compiled.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';

export function validatorSource(name, { esm }) {
  const schema = JSON.parse(readFileSync(new URL(`../schemas/${name}.schema.json`, import.meta.url), 'utf8'));
  const ajv = new Ajv2020({ allErrors: true, strict: true, code: { source: true, esm } });
  return standaloneCode(ajv, ajv.compile(schema));
}
