// The precompiled JSON Schema validators a bundle carries inside it: none here (the modules load dist/validators/
// or compile at run time, src/schema.ts); every bundle shape replaces this module with the three validators
// compiled by ajv standalone at build time (scripts/shapes.mjs), so a bundle needs no file beside it.
import type { AjvFn, SchemaName } from './schema.js';

export const PRECOMPILED: Partial<Record<SchemaName, AjvFn>> = {};
