// A file's problem said once: a refusal that already begins with the file (openRegular's) is kept as it is; one naming
// another path (the directory above it), a Node error, or a non-Error gets the file's name before it.
import t from 'tap';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileWhy } from '../../src/host/file-why.js';
import { O_RDONLY } from '../../src/host/fd.js';
import { openRegular } from '../../src/host/files.js';

const caught = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('no error');
};

t.test('each shape of error, on real files', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gdrgate-file-why-'));
  const real = path.join(dir, 'real');
  const link = path.join(dir, 'link');
  writeFileSync(real, 'x');
  symlinkSync(real, link);
  t.equal(fileWhy(link, caught(() => openRegular(link, O_RDONLY))), `${link} is a symbolic link`);
  t.equal(fileWhy(dir, caught(() => openRegular(dir, O_RDONLY))), `${dir} is not a regular file`);
  const gone = path.join(dir, 'gone');
  t.equal(fileWhy(gone, caught(() => openRegular(gone, O_RDONLY))), `${gone}: ENOENT: no such file or directory, open '${gone}'`);
  // Another path's refusal, and a file whose name is a prefix of another's: the file named first.
  t.equal(fileWhy(`${dir}/gate.log`, new Error(`${dir} is owned by uid 1000: another user could plant files there`)), `${dir}/gate.log: ${dir} is owned by uid 1000: another user could plant files there`);
  t.equal(fileWhy(real, new Error(`${real}2 is a symbolic link`)), `${real}: ${real}2 is a symbolic link`);
  t.equal(fileWhy(real, 'odd'), `${real}: odd`);
});
