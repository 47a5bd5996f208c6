// Every way a real snapshot can be cut short is refused, never read as a smaller node: the bundled H200 capture's tar
// cut at every 512-byte block boundary and inside every block's last bytes, and the whole archive with any one of its
// file entries written twice.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { parseSnapshot, SnapshotError } from '../../src/snapshot/open.js';
import { readTar, writeTar } from '../../src/snapshot/tar.js';
import { REPO } from '../helpers/paths.js';

const tar = gunzipSync(readFileSync(`${REPO}/examples/h200-vm.tar.gz`));
// The end-of-archive blocks: where the last entry ends.
let end = tar.length;
while (end >= 512 && tar.subarray(end - 512, end).every((b) => b === 0)) end -= 512;

t.test('the whole archive reads; cut anywhere before its end-of-archive block, it is refused', async (t) => {
  t.equal(parseSnapshot('h200', tar).root, 'h200');
  let refused = 0;
  const cuts: number[] = [];
  for (let at = 0; at <= end; at += 512) cuts.push(at, Math.max(0, at - 7));
  for (const at of cuts) {
    try {
      parseSnapshot('cut', tar.subarray(0, at));
    } catch (e) {
      if (e instanceof SnapshotError) refused++;
      else throw e;
    }
  }
  t.equal(refused, cuts.length, `${cuts.length} cuts, every one refused as not a snapshot archive`);
});

t.test('any one file entry written twice (as `tar -r` appends it) is refused', async (t) => {
  const entries = readTar(tar);
  const files = entries.filter((e) => e.kind === 'file');
  let refused = 0;
  for (const f of files) {
    try {
      parseSnapshot('dup', writeTar([...entries, f]));
    } catch (e) {
      if (e instanceof SnapshotError && /: more than one entry in the archive$/.test(e.message)) refused++;
      else throw e;
    }
  }
  t.equal(refused, files.length, `${files.length} files, each appended again, every archive refused`);
});
