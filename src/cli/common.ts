// The report, to stdout, whole: src/host/stdout.ts writes it.
export { out } from '../host/stdout.js';
