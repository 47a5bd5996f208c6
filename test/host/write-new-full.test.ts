// writeNew (src/host/files.ts) on a full file system: the file it created (O_EXCL) but could not write whole is
// removed, so an empty drain.lock or state file never stays behind to read as written (an empty lock blocked the next
// drain for its 60 s). A real ENOSPC: a 64 KiB tmpfs in a mount namespace of its own, filled first.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const UNSHARE = '/usr/bin/unshare';
if (process.getuid?.() !== 0 || !existsSync(UNSHARE)) {
  t.skip('writeNew on a full file system: needs root and unshare(1) for a tmpfs of its own', () => {});
} else {
  t.test('a write that fails with ENOSPC leaves no file; one that fits is written whole', async (t) => {
    const dir = scratchDir('gdrgate-fullfs-');
    const files = path.join(REPO, 'dist/host/files.js');
    const js = `
      import fs from 'node:fs';
      import { writeNew } from ${JSON.stringify(files)};
      const d = process.argv[1];
      writeNew(d + '/small', 'ok', 0o600);
      try { for (let i = 0; ; i++) fs.writeFileSync(d + '/fill' + i, Buffer.alloc(4096)); } catch {}
      let err = null;
      try { writeNew(d + '/drain.lock', 'x'.repeat(65536), 0o600); } catch (e) { err = e.code; }
      console.log(JSON.stringify({ err, lock: fs.existsSync(d + '/drain.lock'), small: fs.readFileSync(d + '/small', 'utf8') }));`;
    const r = spawnSync(UNSHARE, ['-m', '/bin/sh', '-c', `mount -t tmpfs -o size=64k gdrgate-full "$0" && exec "$1" --input-type=module -e "$2" "$0"`, dir, process.execPath, js], { encoding: 'utf8', timeout: 60_000 });
    t.equal(r.stderr, '');
    t.same(JSON.parse(r.stdout), { err: 'ENOSPC', lock: false, small: 'ok' });
  });
}
