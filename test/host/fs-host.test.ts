// FsHost's own walk of links (realPath) and its reads, against the platform's realpath(3) and readFileSync on
// trees built here: every case a sysfs or capture tree can hold, and the ones a hostile tree can.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { TEXT_MAX } from '../../src/host/host.js';
import { H200 } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const root = fs.realpathSync(scratchDir('gdrgate-fshost-'));
const mk = (p: string, text = ''): void => {
  fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
  fs.writeFileSync(path.join(root, p), text);
};
const ln = (target: string, p: string): void => {
  fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
  fs.symlinkSync(target, path.join(root, p));
};
// A sysfs-like layout: class and bus links into /sys/devices, a link to a link, a link through a linked dir.
mk('sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/vendor', '0x10de\n');
ln('../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0', 'sys/bus/pci/devices/0000:01:00.0');
ln('../../bus/pci/devices/0000:01:00.0', 'sys/class/gpu/card0'); // link → link
ln('pci0000:00', 'sys/devices/alias'); // a linked directory in the middle of a path
ln('/sys/devices', 'sys/abs'); // absolute: meant for the captured node, resolved inside this root as a chroot would
ln('loop-b', 'sys/loop-a');
ln('loop-a', 'sys/loop-b');
ln('../../../../../../../../../../..', 'sys/climb');
ln('nowhere', 'sys/dangling');

const host = new FsHost(root);
const want = (p: string): string => path.relative(root, fs.realpathSync.native(path.join(root, p))).replace(/^/, '/');

for (const p of [
  '/sys/bus/pci/devices/0000:01:00.0',
  '/sys/class/gpu/card0',
  '/sys/class/gpu/card0/vendor',
  '/sys/devices/alias/0000:00:01.0/0000:01:00.0',
  '/sys/bus/pci/devices/0000:01:00.0/..',
  '/sys/./bus//pci/devices/0000:01:00.0/',
  '/sys',
  '/',
]) {
  const r = await host.realPath(p);
  t.same(r, { ok: true, value: want(p) === '/' ? '/' : want(p) }, `realPath ${p} = realpath(3)`);
}
// Asked again: the same answers from the cached components.
t.same(await host.realPath('/sys/class/gpu/card0'), { ok: true, value: '/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0' }, 'second resolution agrees');

const fails = async (p: string): Promise<{ missing: boolean; reason: string }> => {
  const r = await host.realPath(p);
  if (r.ok) throw new Error(`${p} resolved to ${r.value}`);
  return { missing: r.missing, reason: r.reason };
};
const err = (p: string): string => {
  try {
    fs.realpathSync.native(path.join(root, p));
    return 'resolved';
  } catch (e) {
    return (e as Error).message;
  }
};
// Paths are normalized as written (`a/link/..` is `a`), as before any resolution: this one names nothing.
for (const p of ['/sys/bus/pci/devices/0000:01:00.0/../../pci0000:00', '/sys/dangling', '/sys/nothing/here', '/sys/bus/pci/devices/0000:01:00.0/vendor/x', '/sys/loop-a']) {
  const f = await fails(p);
  t.ok(f.reason.endsWith(err(p)), `${p}: worded as realpath(3): ${f.reason}`);
  t.equal(f.reason.slice(0, f.reason.indexOf(':')), err(p).slice(0, err(p).indexOf(':')), `${p}: same error code`);
}
t.same(await host.realPath('/sys/abs/pci0000:00/0000:00:01.0'), { ok: true, value: '/sys/devices/pci0000:00/0000:00:01.0' }, 'an absolute link resolves inside the root, never onto this machine');
t.same(await host.readText('/sys/abs/pci0000:00/0000:00:01.0/0000:01:00.0/vendor'), { ok: true, value: '0x10de\n' });
t.match(await fails('/sys/climb/etc'), { missing: false, reason: /^unreadable: leaves the root/ }, '.. beyond the root stays refused');

// Reads: whole files of any size, `max` honoured, nothing left of an earlier, longer read.
const big = Buffer.alloc(200_000, 0x61);
big.write('END', big.length - 3);
mk('proc/big', big.toString('latin1'));
mk('proc/short', 'x\n');
const b = await host.readBytes('/proc/big');
t.ok(b.ok && Buffer.from(b.value).equals(big), 'a file larger than the read buffer comes back whole');
// Longer than the buffer has grown to so far: the text comes from the new, larger buffer.
mk('proc/bigger', `${'b'.repeat(599_999)}\n`);
const bigText = await host.readText('/proc/bigger');
t.ok(bigText.ok && bigText.value.length === 600_000 && /^b+\n$/.test(bigText.value), 'a longer file as text, whole');
const s = await host.readText('/proc/short');
t.same(s, { ok: true, value: 'x\n' }, 'a short read after a long one holds only its own bytes');
const m = await host.readBytes('/proc/big', 4096);
t.equal(m.ok && m.value.length, 4096, 'max bounds the read');
const first = await host.readBytes('/proc/short');
await host.readBytes('/proc/big');
t.same(first.ok && Buffer.from(first.value).toString(), 'x\n', 'bytes handed out are not overwritten by the next read');
t.match(await host.readText('/proc/none'), { ok: false, missing: true, reason: /^ENOENT/ }, 'absent file');
t.match(await host.readText('/sys/devices'), { ok: false, missing: false, reason: /^EISDIR/ }, 'a directory is unreadable, not absent');

// The bundled real capture: every file reads as readFileSync reads it.
const h200 = new FsHost(H200);
const files: string[] = [];
const walk = (d: string): void => {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.isFile()) files.push(p);
  }
};
walk(path.join(H200, 'sys'));
let same = 0;
for (const f of files) {
  const r = await h200.readBytes('/' + path.relative(H200, f));
  if (r.ok && Buffer.from(r.value).equals(fs.readFileSync(f))) same++;
}
t.equal(same, files.length, `all ${files.length} files of the H200 capture's /sys read byte for byte`);
// As text: each as readFileSync decodes it, but a file without a final newline (the binary config spaces): a kernel
// text file so ended was cut short (host.ts cutShort), refused.
let sameText = 0;
const refused: string[] = [];
for (const f of files) {
  const k = '/' + path.relative(H200, f);
  const r = await h200.readText(k);
  if (r.ok && r.value === fs.readFileSync(f, 'utf8')) sameText++;
  else if (!r.ok && r.reason === `${k}: cut short (no final newline, which the kernel ends every text file with)`) refused.push(path.basename(k));
}
t.equal(sameText + refused.length, files.length, `and as text, each as readFileSync decodes it, or refused as cut short`);
t.same([...new Set(refused)].sort(), ['.note.Linux', '.note.gnu.build-id', '.note.gnu.property', 'config'], 'only binary files lack a final newline there: the config spaces, a module\'s ELF notes');

// A failed read leaves the process as it found it: no stack is kept for the errors a read turns into reasons, and
// the limit on stack traces is the caller's again afterwards.
const limit = Error.stackTraceLimit;
t.match(await host.readText('/sys/nothing/here'), { ok: false, missing: true });
t.match(await host.readText('/sys/loop-a/x'), { ok: false, missing: false });
t.equal(Error.stackTraceLimit, limit, 'Error.stackTraceLimit unchanged by failed reads');
t.ok((new Error('x').stack ?? '').split('\n').length > 1, 'errors thrown elsewhere still carry a stack');

// An absent component is asked once per run; a second path under it is still worded with its own name.
for (const p of ['/sys/nothing/else', '/sys/nothing/here/deeper']) {
  const f = await fails(p);
  t.ok(f.reason.endsWith(err(p)), `${p} after /sys/nothing/here: worded as realpath(3) for this path: ${f.reason}`);
  t.equal(f.missing, true, `${p}: missing`);
}

// readParts exists only on a live /sys (sysfs), where each part is its own pread; a capture has none, and its
// callers read the file whole (one read: a regular file costs the same for every byte).
t.equal(host.readParts, undefined, 'a capture tree: no readParts');
t.equal(new FsHost(H200).readParts, undefined, 'the bundled capture: no readParts');
const picks = (at: (o: number, n: number) => Uint8Array): number[][] => [[0, 4], [9000, 2]].map(([o, n]) => [...at(o!, n!)]);
const live = fs.existsSync('/sys/bus/pci/devices') && process.getuid?.() === 0 ? fs.readdirSync('/sys/bus/pci/devices') : [];
t.test('a live /sys (sysfs): parts are read where they lie', { skip: live.length === 0 && 'no PCI devices readable as root here' }, async (t) => {
  const sys = new FsHost('/');
  for (const bdf of live.slice(0, 4)) {
    const file = `/sys/bus/pci/devices/${bdf}/config`;
    const whole = fs.readFileSync(file);
    const r = await sys.readParts!(file, (at) => [[...at(0, 64)], [...at(0x30, 8)], at(whole.length - 2, 8).length, at(whole.length, 4).length]);
    t.same(r, { ok: true, value: [[...whole.subarray(0, 64)], [...whole.subarray(0x30, 0x38)], 2, 0] }, `${bdf}: header, a dword pair, the end`);
  }
  t.match(await sys.readParts!('/sys/bus/pci/devices/none/config', picks), { ok: false, missing: true }, 'absent file');
});

// A /proc file is read until a read returns 0: seq_file hands out whole records only, so a read can come back
// short long before the end (/proc/kallsyms: tens of thousands of lines). Elsewhere a short read is the end.
const kallsyms = fs.existsSync('/proc/kallsyms') ? fs.readFileSync('/proc/kallsyms').length : 0;
t.test('a /proc file is read past short reads', { skip: kallsyms < 300_000 && '/proc/kallsyms is absent or small here' }, async (t) => {
  const r = await new FsHost('/').readBytes('/proc/kallsyms', 300_000);
  t.equal(r.ok && r.value.length, 300_000, 'all 300,000 bytes asked for, over several reads');
  t.equal(r.ok && Buffer.from(r.value).subarray(0, 4096).toString(), fs.readFileSync('/proc/kallsyms').subarray(0, 4096).toString(), 'the same bytes as readFileSync');
});

t.test('readText: the whole file or a failed read, never a text cut short (a capture and the live root alike)', async (t) => {
  mk('etc/big.conf', `${'#'.repeat(TEXT_MAX)}\nx=1\n`);
  mk('etc/max.conf', 'y'.repeat(TEXT_MAX));
  t.same(await host.readText('/etc/big.conf'), { ok: false, missing: false, reason: `/etc/big.conf: larger than 16 MiB, not read` });
  const whole = await host.readText('/etc/max.conf');
  t.equal(whole.ok && whole.value.length, TEXT_MAX, 'exactly TEXT_MAX: read');
  const live = await new FsHost('/').readText(path.join(root, 'etc/big.conf'));
  t.equal(live.ok, false, 'on the live root too');
});
