// The snapshot Host answers every Host call as FsHost does on the unpacked tree: values, missing vs unreadable, links, loops.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import type { Host, ReadResult } from '../../src/host/host.js';
import { openSnapshot, parseSnapshot } from '../../src/snapshot/open.js';
import { SnapTree } from '../../src/snapshot/tree.js';

/**
 * The paths of PATHS that are absent from the fixture, recorded as a recording Host finds them (build.ts): a
 * snapshot vouches for an absence only where its manifest records one; any other path it lacks is "not recorded".
 */
const MISSING = ['/nonexistent', '/sys/bus/pci/devices/0000:01:00.0/nope', '/sys/class/x/dangling'];
const MANIFEST = `${JSON.stringify({ tool: 'gdrgate', kind: 'snapshot', format: 1, version: '0.0.9', missing: MISSING })}\n`;

/** A tree as a snapshot holds it: with its manifest, without which it is not one. */
function snapTree(): SnapTree {
  const tree = new SnapTree();
  tree.put('/manifest.json', { kind: 'file', mode: 0o644, data: Buffer.from(MANIFEST) });
  return tree;
}

/** A small tree with every link shape sysfs has, and the broken ones a capture can hold. */
async function fixture(root: string): Promise<void> {
  const mk = async (p: string, data = `${path.basename(p)}\n`): Promise<void> => {
    await fsp.mkdir(path.join(root, path.dirname(p)), { recursive: true });
    await fsp.writeFile(path.join(root, p), data);
  };
  const ln = async (p: string, target: string): Promise<void> => {
    await fsp.mkdir(path.join(root, path.dirname(p)), { recursive: true });
    await fsp.symlink(target, path.join(root, p));
  };
  await mk('sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/vendor', '0x10de\n');
  await mk('sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/config', '\x00\x01\x02\xff');
  await mk('sys/devices/pci0000:00/0000:00:01.0/vendor', '0x8086\n');
  await fsp.mkdir(path.join(root, 'sys/bus/pci/drivers/nvidia'), { recursive: true });
  await fsp.mkdir(path.join(root, 'sys/empty'), { recursive: true });
  await ln('sys/bus/pci/devices/0000:01:00.0', '../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0');
  await ln('sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/driver', '../../../../bus/pci/drivers/nvidia');
  await ln('sys/class/x/chain1', 'chain2');
  await ln('sys/class/x/chain2', '../../bus/pci/devices/0000:01:00.0');
  await ln('sys/class/x/loop1', 'loop2');
  await ln('sys/class/x/loop2', 'loop1');
  await ln('sys/class/x/self', 'self');
  await ln('sys/class/x/dangling', 'nowhere');
  await ln('sys/class/x/tofile', '../../devices/pci0000:00/0000:00:01.0/vendor');
  await ln('sys/class/x/updown', '../../bus/../devices/./pci0000:00');
}

const PATHS = [
  '/', '/sys', '/sys/empty', '/sys/bus/pci/devices', '/sys/bus/pci/devices/0000:01:00.0', '/sys/bus/pci/devices/0000:01:00.0/vendor',
  '/sys/bus/pci/devices/0000:01:00.0/config', '/sys/bus/pci/devices/0000:01:00.0/driver', '/sys/bus/pci/devices/0000:01:00.0/nope',
  '/sys/devices/pci0000:00/0000:00:01.0/vendor/x', '/sys/class/x', '/sys/class/x/chain1', '/sys/class/x/chain1/vendor', '/sys/class/x/loop1',
  '/sys/class/x/loop1/a', '/sys/class/x/self', '/sys/class/x/dangling', '/sys/class/x/tofile', '/sys/class/x/updown', '/sys/class/x/updown/0000:00:01.0/vendor',
  '/sys/class/x/../x/chain1', '/sys/../sys/class', '/nonexistent', 'sys/devices', '/sys/class/x/chain1/driver', '/sys/class/x/chain1/driver/',
];

/** What must agree: ok, and missing vs unreadable on failure (messages differ by design), else the value. */
function shape(r: ReadResult<unknown>): unknown {
  if (!r.ok) return { ok: false, missing: r.missing };
  const v = r.value;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v && typeof v === 'object' && 'kind' in v) {
    const s = v as { kind: string; mode: number; size: number };
    return { kind: s.kind, mode: s.kind === 'link' ? 'link' : s.mode, size: s.kind === 'dir' ? 'dir' : s.size };
  }
  return v;
}

async function answers(h: Host, p: string): Promise<Record<string, unknown>> {
  return {
    list: shape(await h.list(p)),
    readText: shape(await h.readText(p)),
    readBytes: shape(await h.readBytes(p, 3)),
    readLink: shape(await h.readLink(p)),
    realPath: shape(await h.realPath(p)),
    lstat: shape(await h.lstat(p)),
    stat: shape(await h.stat(p)),
  };
}

t.test('every call on every path answers as FsHost on the unpacked tree', async (t) => {
  const dir = t.testdir({ src: {} });
  const src = path.join(dir, 'src');
  await fixture(src);
  const file = path.join(dir, 'fx.tar.gz');
  await fsp.writeFile(path.join(src, 'manifest.json'), MANIFEST);
  const tar = spawnSync('tar', ['-czf', file, '-C', src, 'manifest.json', 'sys']);
  t.equal(tar.status, 0, 'GNU tar packed the fixture');
  const snap = await openSnapshot(file);
  t.equal(snap.root, file);
  const fs = new FsHost(src);
  for (const p of PATHS) t.same(await answers(snap, p), await answers(fs, p), p);
  t.same(await snap.readText('/sys/class/x/loop1'), { ok: false, missing: false, reason: 'ELOOP: too many levels of symbolic links, snapshot /sys/class/x/loop1' }, 'a loop is an error, not missing');
  t.same(await snap.list('/sys/class/x/dangling'), { ok: false, missing: true, reason: 'ENOENT: no such file or directory, snapshot /sys/class/x/nowhere' });
  // Recorded missing through a link: the same component reached by its real path is absent too, and so is
  // anything below it; a sibling nobody asked for is unknown.
  const dev = '/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0';
  const nope = { ok: false, missing: true, reason: `ENOENT: no such file or directory, snapshot ${dev}/nope` };
  t.same(await snap.stat(`${dev}/nope`), nope, 'the real path of a recorded absence');
  t.same(await snap.readText(`${dev}/nope/deeper`), nope, 'below a recorded absence');
  t.same(await snap.readText('/sys/class/x/nowhere'), { ok: false, missing: true, reason: 'ENOENT: no such file or directory, snapshot /sys/class/x/nowhere' }, 'the dangling link target');
  const other = { ok: false, missing: false, reason: `not recorded by this snapshot (taken by gdrgate 0.0.9): ${dev}/other` };
  t.same(await snap.readText(`${dev}/other`), other);
  t.same(await snap.list('/sys/bus/pci/devices/0000:01:00.0/other/x'), other);
});

t.test('a link out of the archive is never followed (FsHost would read this machine); an absolute one stays inside', async (t) => {
  const tree = snapTree();
  tree.put('/sys/a/up', { kind: 'link', target: '../../../../etc' });
  tree.put('/sys/a/abs', { kind: 'link', target: '/etc' });
  tree.put('/sys/a/in', { kind: 'link', target: '/sys/a/up' });
  const h = parseSnapshot('mem', tree.toTar(0));
  for (const p of ['/sys/a/up/hostname', '/sys/a/in/hostname']) {
    const climbs = { ok: false, missing: false, reason: `unreadable: leaves the root: a link target climbs above it (resolving ${p})` };
    t.same(await h.readText(p), climbs, p);
    t.same(await h.realPath(p), climbs, p);
  }
  const abs = await h.readText('/sys/a/abs/hostname');
  t.same(abs, { ok: false, missing: false, reason: 'not recorded by this snapshot (taken by gdrgate 0.0.9): /etc' }, "an absolute link: the archive's own /etc, not recorded");
  t.same(await h.readLink('/sys/a/abs'), { ok: true, value: '/etc' }, 'the link itself reads back');
});

t.test('a file stored without read permission (unreadable at capture) answers EACCES, not missing', async (t) => {
  const tree = snapTree();
  tree.put('/sys/x/config', { kind: 'file', mode: 0o200, data: new Uint8Array(0) });
  const h = parseSnapshot('mem', tree.toTar(0));
  t.same(await h.readBytes('/sys/x/config'), { ok: false, missing: false, reason: 'EACCES: permission denied, snapshot /sys/x/config' });
  t.same(await h.lstat('/sys/x/config'), { ok: true, value: { kind: 'file', mode: 0o200, uid: 0, size: 0, rdev: 0 } });
});

t.test('bad input: not gzip/tar, over the cap, a directory', async (t) => {
  const dir = t.testdir({ 'junk.tar.gz': 'this is not a snapshot', 'bad.gz': Buffer.from([0x1f, 0x8b, 1, 2, 3]) });
  await t.rejects(openSnapshot(path.join(dir, 'junk.tar.gz')), /not a snapshot archive/);
  await t.rejects(openSnapshot(path.join(dir, 'bad.gz')), /not a readable gzip stream/);
  await t.rejects(openSnapshot(dir), /not a regular file/);
  t.ok(readFileSync(path.join(dir, 'junk.tar.gz')).length < 100);
});

// Read through one descriptor, checked there and on what came: a file that says 0 bytes and holds more (procfs, some
// FUSE; or one swapped after a check by path) is never read past the cap its size allowed.
t.test('a file whose size says less than it holds is not read past what it said', async (t) => {
  const said = await openSnapshot('/proc/self/status').then(() => 'opened', (e: unknown) => (e as Error).message);
  t.equal(said, '/proc/self/status: grew past 0 bytes while it was read');
});
