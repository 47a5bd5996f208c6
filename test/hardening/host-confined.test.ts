// A capture directory is read only inside itself, and only its regular files are read: an absolute link resolves
// inside it (as in a chroot), a relative link that climbs out with `..` is refused, a FIFO is never read.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { cli } from '../helpers/cli.js';
import { H200 } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

/** A driver version no capture here has: the report prints the one it reads. */
const SECRET = '777.77.77';
const GPU = 'sys/devices/pci0000:00/0000:00:06.0';

/** A copy of the bundled capture next to a 0600 file outside it; the copy's links are planted by each test. */
function capture(t: Test): { root: string; outside: string } {
  const nvrm = fs.readFileSync(path.join(H200, 'proc/driver/nvidia/version'), 'utf8').replace('580.159.04', SECRET);
  const dir = fs.realpathSync(t.testdir({ outside: { 'secret.txt': `${SECRET}\n`, nvrm, sub: { 'x.txt': `${SECRET}\n` } } }));
  fs.chmodSync(path.join(dir, 'outside/secret.txt'), 0o600);
  const root = path.join(dir, 'cap', 'node');
  fs.mkdirSync(path.dirname(root), { recursive: true });
  fs.cpSync(H200, root, { recursive: true, verbatimSymlinks: true });
  return { root, outside: path.join(dir, 'outside') };
}

const plant = (root: string, p: string, target: string): void => {
  fs.rmSync(path.join(root, p), { force: true, recursive: true });
  fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
  fs.symlinkSync(target, path.join(root, p));
};

const leaves = (at: string) => ({ ok: false, missing: false, reason: `unreadable: leaves the root: a link target climbs above it (resolving ${at})` });
const absent = (root: string, p: string) => ({ ok: false, missing: true, reason: `ENOENT: no such file or directory, realpath '${root}${p}'` });

t.test('an absolute link resolves inside the root; a relative ../../.. link is refused by every call, never followed', async (t) => {
  const { root, outside } = capture(t);
  plant(root, 'sys/abs-file', path.join(outside, 'secret.txt'));
  plant(root, 'sys/abs-dir', outside);
  const up = path.relative(path.join(root, 'sys'), outside); // ../../../outside
  t.match(up, /^(\.\.\/){3}outside$/, 'the relative link climbs three levels');
  plant(root, 'sys/rel-file', `${up}/secret.txt`);
  plant(root, 'sys/rel-dir', up);
  plant(root, 'sys/hop', 'rel-dir'); // a link to a link that leaves
  const h = new FsHost(root);
  plant(root, 'sys/abs-in', `/${GPU}/vendor`);
  // The machine path of the outside file, taken inside the root: absent there, so absent, and the secret unread.
  for (const [p, opened] of [['/sys/abs-file', '/sys/abs-file'], ['/sys/abs-dir/secret.txt', '/sys/abs-dir']] as const) {
    t.same(await h.readText(p), absent(root, opened), `readText ${p}`);
    t.same(await h.stat(p), absent(root, p), `stat ${p}`);
  }
  t.same(await h.list('/sys/abs-dir'), absent(root, '/sys/abs-dir'), 'list /sys/abs-dir');
  t.same(await h.readText('/sys/abs-in'), { ok: true, value: '0x10de\n' }, "an absolute link to the root's own file reads it");
  t.same(await h.realPath('/sys/abs-in'), { ok: true, value: `/${GPU}/vendor` });
  for (const [p, opened] of [['/sys/rel-file', '/sys/rel-file'], ['/sys/hop/secret.txt', '/sys/hop'], ['/sys/rel-dir/sub/x.txt', '/sys/rel-dir/sub']] as const) {
    t.same(await h.readText(p), leaves(opened), `readText ${p}`);
    t.same(await h.readBytes(p), leaves(opened), `readBytes ${p}`);
    t.same(await h.stat(p), leaves(p), `stat ${p}`);
    t.same(await h.realPath(p), leaves(p), `realPath ${p}`);
    t.same(await h.access(p), { access: 'unknown', why: leaves(p).reason }, `access ${p}`);
  }
  for (const p of ['/sys/rel-dir', '/sys/hop', '/sys/rel-dir/sub']) t.same(await h.list(p), leaves(p), `list ${p}`);
  t.same(await h.lstat('/sys/rel-dir/sub'), leaves('/sys/rel-dir'), 'lstat through a link that leaves');
  t.same(await h.readLink('/sys/rel-dir/sub'), leaves('/sys/rel-dir'), 'readLink through a link that leaves');
  t.match(await h.lstat('/sys/abs-file'), { ok: true, value: { kind: /^link$/ } }, 'the link itself is in the root: lstat sees it');
  t.same(await h.readLink('/sys/rel-file'), { ok: true, value: `${up}/secret.txt` }, 'and its text reads back');
  t.match(await h.readText(`/${GPU}/vendor`), { ok: true, value: /^0x10de\n$/ }, 'files inside the root still read');
});

t.test('a link that climbs out and back in is refused too (it walked outside)', async (t) => {
  const { root } = capture(t);
  const back = `../../../${path.basename(path.dirname(root))}/${path.basename(root)}/${GPU}/vendor`;
  plant(root, 'sys/back', back);
  t.ok(fs.readFileSync(path.join(root, 'sys/back'), 'utf8').startsWith('0x10de'), 'the OS follows it back into the root');
  t.same(await new FsHost(root).readText('/sys/back'), leaves('/sys/back'));
});

t.test('check and compare never print a file outside the capture', async (t) => {
  const { root, outside } = capture(t);
  // The driver version the report prints, linked out of the root (absolute) and up out of it (relative).
  plant(root, 'proc/driver/nvidia/version', path.join(outside, 'nvrm'));
  plant(root, 'sys/module/nvidia/version', path.relative(path.join(root, 'sys/module/nvidia'), path.join(outside, 'secret.txt')));
  for (const args of [['check', '--root', root], ['check', '--json', '--root', root], ['compare', H200, root]]) {
    const r = cli(args);
    t.notOk(`${r.stdout}${r.stderr}`.includes(SECRET), `${args[0]} ${args[1]}: the outside file's text is not shown`);
    t.not(r.code, 3, `${args.join(' ')}: not an internal error`);
  }
});

t.test('a FIFO where an attribute should be: refused at once as not a regular file, never read', async (t) => {
  const { root } = capture(t);
  const fifo = path.join(root, GPU, 'current_link_width');
  fs.rmSync(fifo);
  const mk = spawnSync('mkfifo', [fifo]);
  t.equal(mk.status, 0, 'mkfifo');
  plant(root, 'sys/fifo-link', `../${GPU}/current_link_width`);
  const h = new FsHost(root);
  // No writer ever opens these FIFOs: a read that waited for one would never answer (tap's timeout would fail the
  // file), so an answer at all is "without waiting". No clock needed.
  for (const p of [`/${GPU}/current_link_width`, '/sys/fifo-link']) {
    t.same(await h.readText(p), { ok: false, missing: false, reason: 'not a regular file (fifo)' }, `readText ${p}`);
    t.same(await h.readBytes(p, 4), { ok: false, missing: false, reason: 'not a regular file (fifo)' }, `readBytes ${p}`);
  }
  t.match(await h.stat('/sys/fifo-link'), { ok: true, value: { kind: /^fifo$/ } }, 'stat still says what it is');
  const live = new FsHost('/');
  const tmp = scratchDir('gdrgate-fifo-');
  t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
  spawnSync('mkfifo', [path.join(tmp, 'f')]);
  t.same(await live.readText(path.join(tmp, 'f')), { ok: false, missing: false, reason: 'not a regular file (fifo)' }, 'the live root refuses it too');
  t.same(await live.readText(tmp), { ok: false, missing: false, reason: 'EISDIR: illegal operation on a directory, read' }, 'a directory is still EISDIR');
});

t.test('access() answers through the root and inside it', async (t) => {
  const { root } = capture(t);
  const h = new FsHost(root);
  t.same(await h.access(`/${GPU}/vendor`), { access: 'rw' }, 'a writable file in the tree');
  t.match(await h.access('/sys/none'), { access: /^unknown$/, why: /^ENOENT$/ }, 'absent: unknown, not denied');
});
