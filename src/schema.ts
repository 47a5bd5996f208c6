// JSON Schema validators (ajv, draft 2020-12), errors as `/instance/path: message`. The build precompiles
// them (dist/validators/*.js); compiling at run time is the fallback for running from sources.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type SchemaName = 'baseline' | 'config' | 'report';
export type Validate = (data: unknown) => string[];

interface AjvError {
  readonly instancePath: string;
  readonly message?: string;
  readonly params?: Record<string, unknown>;
}
interface AjvFn {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}

const cache = new Map<SchemaName, Validate>();

export function schemaPath(name: SchemaName): string {
  return fileURLToPath(new URL(`../schemas/${name}.schema.json`, import.meta.url));
}

async function compiled(name: SchemaName): Promise<AjvFn> {
  const pre = new URL(`./validators/${name}.js`, import.meta.url);
  if (existsSync(fileURLToPath(pre))) return ((await import(pre.href)) as { default: AjvFn }).default;
  const { Ajv2020 } = await import('ajv/dist/2020.js');
  return new Ajv2020({ allErrors: true, strict: true }).compile(JSON.parse(readFileSync(schemaPath(name), 'utf8')) as object) as AjvFn;
}

export async function validatorFor(name: SchemaName): Promise<Validate> {
  const hit = cache.get(name);
  if (hit) return hit;
  const fn = await compiled(name);
  const v: Validate = (data) =>
    fn(data)
      ? []
      : (fn.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message ?? 'invalid'}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
  cache.set(name, v);
  return v;
}
