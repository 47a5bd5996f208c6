// JSON Schema validators (ajv, draft 2020-12), errors as `/instance/path: message`. The build precompiles
// them (dist/validators/*.js); compiling at run time is the fallback for running from sources.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { exists } from './host/entries.js';
import { readText } from './host/whole-file.js';
import { PRECOMPILED } from './validators.js';

export type SchemaName = 'baseline' | 'config' | 'report' | 'fleet-summary';
export type Validate = (data: unknown) => string[];

interface AjvError {
  readonly instancePath: string;
  readonly message?: string;
  readonly params?: Record<string, unknown>;
}
export interface AjvFn {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}

const cache = new Map<SchemaName, Validate>();

/** The package root (holds schemas/ and dist/), whether this code runs from src/, dist/ or a bundle chunk. */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4 && !exists(path.join(dir, 'schemas')); i++) dir = path.dirname(dir);
  return dir;
}

export function schemaPath(name: SchemaName): string {
  return path.join(packageRoot(), 'schemas', `${name}.schema.json`);
}

async function compiled(name: SchemaName): Promise<AjvFn> {
  const given = PRECOMPILED[name];
  if (given) return given;
  const pre = path.join(packageRoot(), 'dist', 'validators', `${name}.js`);
  if (exists(pre)) return ((await import(pathToFileURL(pre).href)) as { default: AjvFn }).default;
  // `.default` is the class both natively (module.exports) and in the bundle (exports.default).
  type AjvClass = typeof import('ajv/dist/2020.js').Ajv2020;
  const Ajv2020 = ((await import('ajv/dist/2020.js')) as unknown as { default: AjvClass }).default;
  return new Ajv2020({ allErrors: true, strict: true }).compile(JSON.parse(readText(schemaPath(name))) as object) as AjvFn;
}

/** What ajv's message leaves out: the property not allowed, the values that are (enum, const). */
function detail(p: Record<string, unknown> | undefined): string {
  if (!p) return '';
  if ('additionalProperty' in p) return ` (${String(p.additionalProperty)})`;
  if (Array.isArray(p.allowedValues)) return `: ${p.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  if ('allowedValue' in p) return `: ${JSON.stringify(p.allowedValue)}`;
  return '';
}

export async function validatorFor(name: SchemaName): Promise<Validate> {
  const hit = cache.get(name);
  if (hit) return hit;
  const fn = await compiled(name);
  const v: Validate = (data) =>
    fn(data)
      ? []
      : (fn.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message ?? 'invalid'}${detail(e.params)}`);
  cache.set(name, v);
  return v;
}
