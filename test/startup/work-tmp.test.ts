// startup-snapshot where its work directory cannot be made or fills up (TMPDIR missing, a full /tmp, as during a
// package's postinst on a full disk): a refusal in one line (exit 2), never an internal error with a Node abort and a
// JSON stack in the installer's output; nothing left in TMPDIR, and the blob there before left as it was.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const PROGRAM = path.join(REPO, 'dist/gdrgate.cjs');
const CAPTURE = path.join(REPO, 'examples/h200-vm.tar.gz');
const dir = scratchDir('gdrgate-work-tmp-');
const out = path.join(dir, 'gate.blob');
writeFileSync(out, 'the blob made before');
const snapshot = (tmp: string) => {
  const r = spawnSync(process.execPath, [PROGRAM, 'startup-snapshot', '--out', out, '--warm-up', CAPTURE], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', TMPDIR: tmp }, timeout: 300_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

t.test('TMPDIR names no directory: exit 2, said in one line, before the build', async (t) => {
  const none = path.join(dir, 'none');
  t.same(snapshot(none), { code: 2, stdout: '', stderr: `gdrgate: not making ${out}: no work directory in TMPDIR: ${none}: ENOENT (this user cannot make a file there)\n` });
  t.equal(readFileSync(out, 'utf8'), 'the blob made before');
});

// A real full file system: a tmpfs of 256 KiB (the warm-up's files fit, the 10 MiB blob does not).
const full = path.join(dir, 'full');
mkdirSync(full);
const mounted = process.getuid?.() === 0 && spawnSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=1777', 'tmpfs', full]).status === 0;
if (mounted) t.teardown(() => void spawnSync('/usr/bin/umount', [full]));
t.test('TMPDIR on a file system that fills up during the build: exit 2, said in one line', { skip: mounted ? false : 'needs root to mount a small tmpfs' }, async (t) => {
  const r = snapshot(full);
  t.same({ code: r.code, stdout: r.stdout }, { code: 2, stdout: '' }, r.stderr);
  t.equal(r.stderr, `gdrgate: not making ${out}: ${full} is full, where the build makes about 20 MiB of files (TMPDIR names another)\n`);
  t.same(readdirSync(full), [], 'the work directory removed');
  t.equal(readFileSync(out, 'utf8'), 'the blob made before');
});
