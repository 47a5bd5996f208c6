// JSON Schema validators (ajv, draft 2020-12), errors as `/instance/path: message`.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type SchemaName = 'baseline' | 'config' | 'report';
export type Validate = (data: unknown) => string[];

const cache = new Map<SchemaName, Validate>();

export function schemaPath(name: SchemaName): string {
  return fileURLToPath(new URL(`../schemas/${name}.schema.json`, import.meta.url));
}

export async function validatorFor(name: SchemaName): Promise<Validate> {
  const hit = cache.get(name);
  if (hit) return hit;
  const { Ajv2020 } = await import('ajv/dist/2020.js');
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  const fn = ajv.compile(JSON.parse(readFileSync(schemaPath(name), 'utf8')) as object);
  const v: Validate = (data) =>
    fn(data) ? [] : (fn.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message ?? 'invalid'}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
  cache.set(name, v);
  return v;
}
