// The parse memos (src/inventory/memo.ts, config-memo.ts): bounded whatever the input, and never an answer for other
// bytes: real config spaces, and ones made to share a hash.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parsePciConfigOnce } from '../../src/inventory/config-memo.js';
import { BoundedMemo } from '../../src/inventory/memo.js';
import { parsePciConfig } from '../../src/parsers/pci-config.js';
import { REPO } from '../helpers/paths.js';

t.test('BoundedMemo: one make per key while it holds them; past max it starts again', async (t) => {
  const m = new BoundedMemo<number, number>(4);
  let made = 0;
  const get = (k: number): number => m.get(k, () => (made++, k * 10));
  for (const k of [0, 1, 2, 3, 0, 1, 2, 3]) t.equal(get(k), k * 10);
  t.equal(made, 4, 'four keys, four makes');
  get(4); // the fifth key: the memo starts again
  t.equal(get(0), 0);
  t.equal(made, 6, 'key 0 made again after the memo was full');
  for (let k = 0; k < 10_000; k++) get(k);
  t.equal(get(9_999), 99_990, 'still right after 10,000 keys');
});

const DIR = path.join(REPO, 'test/fixtures/pci-config');
const blobs = readdirSync(DIR).filter((f) => f.endsWith('.bin')).map((f) => ({ f, b: new Uint8Array(readFileSync(path.join(DIR, f))) }));

t.test('every real config space: the memo answers as the parser does, first time and again', async (t) => {
  t.ok(blobs.length > 0, `${blobs.length} real config spaces`);
  for (const { f, b } of blobs) {
    t.same(parsePciConfigOnce(b), parsePciConfig(b), `${f}: first`);
    t.same(parsePciConfigOnce(b.slice()), parsePciConfig(b), `${f}: again (a copy of the bytes)`);
  }
});

t.test('bytes that share a hash (it samples 4 of every 16 bytes) get their own parse', async (t) => {
  for (const { f, b } of blobs) {
    // Byte 6 (Status) is not sampled: a change there keeps the hash and changes what the parse says.
    const other = b.slice();
    other[6] = other[6]! ^ 0x10; // Status bit 4: capability list present or not
    parsePciConfigOnce(b);
    t.same(parsePciConfigOnce(other), parsePciConfig(other), `${f}: Status flipped, parsed for itself`);
    t.same(parsePciConfigOnce(b), parsePciConfig(b), `${f}: the original still answers as itself`);
    // A third, fourth, … with the same hash: past the two a hash keeps, still parsed right.
    for (let k = 1; k < 6; k++) {
      const x = b.slice();
      x[5] = k;
      t.same(parsePciConfigOnce(x), parsePciConfig(x), `${f}: collision ${k}`);
    }
  }
});
