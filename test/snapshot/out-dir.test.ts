// snapshot --out-dir (what fleet collect runs on each node): the archive is named after SLURMD_NODENAME in that
// directory; a directory that is not there is refused naming --out-dir as given (under fleet collect this text is every
// node's "missing" reason), never a flag the admin did not pass.
import t from 'tap';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { H200 } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

t.test('written as <node>.tar.gz; a missing directory named as --out-dir', async (t) => {
  const dir = scratchDir('gdrgate-outdir-');
  const ok = cli(['snapshot', '--root', H200, '--no-commands', '--out-dir', dir], { SLURMD_NODENAME: 'gpu007' });
  t.equal(ok.code, 0, ok.stderr);
  t.equal(existsSync(path.join(dir, 'gpu007.tar.gz')), true);
  const gone = path.join(dir, 'absent');
  const r = cli(['snapshot', '--root', H200, '--no-commands', '--out-dir', gone], { SLURMD_NODENAME: 'gpu007' });
  t.equal(r.code, 2);
  t.equal(r.stderr, `gdrgate: --out-dir ${gone} (${gone}/gpu007.tar.gz): ENOENT: no such file or directory, lstat '${gone}'\n`);
});
