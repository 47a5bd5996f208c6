// `gdrgate startup-snapshot` without --out writes the blob where the wrappers running that program look: the package's /var/lib/gdrgate/gate.blob for the installed program, gate.blob beside any other (a checkout's dist/), never another program's.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { defaultBlob } from '../../src/startup/make.js';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

t.equal(defaultBlob('/usr/lib/gdrgate/gdrgate.cjs'), '/var/lib/gdrgate/gate.blob', 'the installed program: where the package wrappers look (BLOB=)');
t.equal(defaultBlob('/home/me/gdrgate/dist/gdrgate.cjs'), '/home/me/gdrgate/dist/gate.blob', "a checkout's: beside it, as the wrappers' BLOB=default (beside CLI)");
t.equal(defaultBlob('/opt/lib/gdrgate/gdrgate.cjs'), '/opt/lib/gdrgate/gate.blob', 'a copy elsewhere: beside it');

t.test('a program outside the package makes its blob beside itself', async (t) => {
  const dir = path.join(scratchDir('gdrgate-default-out-'), 'lib');
  mkdirSync(dir);
  const program = path.join(dir, 'gdrgate.cjs');
  copyFileSync(path.join(REPO, 'dist/gdrgate.cjs'), program);
  const r = spawnSync(process.execPath, [program, 'startup-snapshot', '--warm-up', path.join(REPO, 'examples/h200-vm.tar.gz')], { encoding: 'utf8', timeout: 300_000 });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, new RegExp(`^${path.join(dir, 'gate.blob').replace(/[.]/g, '\\.')}: startup snapshot of ${program.replace(/[.]/g, '\\.')} \\(`));
  t.ok(existsSync(path.join(dir, 'gate.blob')), 'the blob is there');
});
