// The startup snapshot's seal (src/startup/blob-seal.ts): the size line startup-snapshot appends, read back exactly;
// any other ending, length or size is a problem worded for the log; the blob found in Node's own arguments.
import t from 'tap';
import { blobOf, seal, SEAL_LENGTH, sealProblem } from '../../src/startup/blob-seal.js';

t.test('a seal is SEAL_LENGTH bytes and reads back as its size', async (t) => {
  const s = seal(10_338_207);
  t.equal(s.length, SEAL_LENGTH);
  t.equal(s.toString('latin1'), `gdrgate-blob 10338207${' '.repeat(SEAL_LENGTH - 22)}\n`);
  t.equal(sealProblem(10_338_207 + SEAL_LENGTH, s), null);
});

t.test('anything else is a problem, never a size', async (t) => {
  const s = seal(1000);
  const no = 'it has no seal (cut short, or not made by gdrgate startup-snapshot)';
  t.equal(sealProblem(1000 + SEAL_LENGTH, s.subarray(1)), no, 'a byte short');
  t.equal(sealProblem(999 + SEAL_LENGTH, Buffer.concat([Buffer.from('x'), s.subarray(0, SEAL_LENGTH - 1)])), no, 'the seal cut at its end');
  t.equal(sealProblem(5000, Buffer.alloc(SEAL_LENGTH)), no, 'zeros');
  t.equal(sealProblem(1001 + SEAL_LENGTH, s), 'it is 1001 bytes, sealed as 1000 (cut short or damaged)', 'another size');
  t.equal(sealProblem(999 + SEAL_LENGTH, s), 'it is 999 bytes, sealed as 1000 (cut short or damaged)');
  t.equal(sealProblem(10, Buffer.from('gdrgate-blob')), no, 'a file shorter than a seal');
  t.throws(() => seal(1e47), /cannot be sealed/);
});

t.test("the blob in Node's arguments", async (t) => {
  t.equal(blobOf(['--snapshot-blob', '/var/lib/gdrgate/gate.blob']), '/var/lib/gdrgate/gate.blob');
  t.equal(blobOf(['--max-old-space-size=64', '--snapshot-blob=/x.blob']), '/x.blob');
  t.equal(blobOf(['--snapshot-blob']), null);
  t.equal(blobOf([]), null);
});
