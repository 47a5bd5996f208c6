// A blob built by hand (`node --snapshot-blob F --build-snapshot PROGRAM`) sealed as gdrgate startup-snapshot seals
// its own (src/startup/blob-seal.ts), so that its main runs: tests that build one to look at what it holds.
import { readFileSync, writeFileSync } from 'node:fs';
import { seal } from '../../src/startup/blob-seal.js';

export function sealBlob(file: string): void {
  const raw = readFileSync(file);
  writeFileSync(file, Buffer.concat([raw, seal(raw.length)]));
}
