// The report, to stdout, whole: src/host/stdout.ts writes it.
export { out, outPieces } from '../host/stdout.js';
