// Validates JSON output against the project's schemas, as a consumer would.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { REPO } from './paths.js';

export function validate(name: 'report' | 'baseline' | 'config' | 'compare' | 'topo' | 'drill' | 'fleet-report' | 'fleet-summary' | 'slurm-config', data: unknown): string[] {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  const v = ajv.compile(JSON.parse(readFileSync(path.join(REPO, 'schemas', `${name}.schema.json`), 'utf8')) as object);
  return v(data) ? [] : (v.errors ?? []).map((e) => `${e.instancePath}: ${e.message}`);
}
