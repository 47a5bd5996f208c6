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

// The class, not three inputs: the checkout's blob cut at offsets from its middle to its last byte (where the review
// saw a cut blob still judge) never runs the gate: an exit outside gdrgate's 0-3 (11 from the seal, or Node's own
// refusal or a signal), and nothing on stdout.
t.test('the real blob cut anywhere in its second half: never a verdict', async (t) => {
  const { spawnSync } = await import('node:child_process');
  const { readFileSync, writeFileSync } = await import('node:fs');
  const path = await import('node:path');
  const { REPO } = await import('../helpers/paths.js');
  const { scratchDir } = await import('../helpers/scratch.js');
  const whole = readFileSync(path.join(REPO, 'dist/gate.blob'));
  const file = path.join(scratchDir('gdrgate-blob-cut-'), 'cut.blob');
  const cuts = [0.5, 0.75, 0.9, 0.97, 0.99, 0.999, 0.9999].map((f) => Math.floor(whole.length * f)).concat([whole.length - SEAL_LENGTH - 1, whole.length - SEAL_LENGTH, whole.length - 1]);
  for (const at of cuts) {
    writeFileSync(file, whole.subarray(0, at));
    const r = spawnSync(process.execPath, ['--snapshot-blob', file, 'version'], { encoding: 'utf8', timeout: 60_000 });
    const code = r.status ?? 128;
    t.same([code > 3, r.stdout], [true, ''], `cut at ${at} of ${whole.length}: exit ${r.status ?? r.signal}, nothing run`);
  }
});
