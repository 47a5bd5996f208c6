// The ustar reader/writer against GNU tar as the oracle: what we write lists and extracts identically, what GNU tar writes reads back identically.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { readTar, TarError, writeTar, type TarEntry } from '../../src/snapshot/tar.js';
import { SnapTree } from '../../src/snapshot/tree.js';
import { exactly } from '../helpers/exactly.js';

const tar = (args: string[], cwd?: string): string => {
  const r = spawnSync('tar', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tar ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const haveTar = spawnSync('tar', ['--version'], { encoding: 'utf8' }).stdout?.includes('GNU tar');

const long = (n: number, seg = 40): string => Array.from({ length: Math.ceil(n / seg) }, (_, i) => `d${i}`.padEnd(seg - 1, 'x')).join('/').slice(0, n).replace(/\/$/, 'y');
const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 7) % 256);
const E = (path: string, kind: TarEntry['kind'], extra: Partial<TarEntry> = {}): TarEntry => ({ path, kind, mode: kind === 'dir' ? 0o755 : 0o644, mtime: 1764000000, ...extra });

/** Inserts a directory entry before the first entry below it, as a writer must. */
function withParents(es: TarEntry[]): TarEntry[] {
  const out: TarEntry[] = [];
  const seen = new Set<string>();
  for (const e of es) {
    const parts = e.path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const d = parts.slice(0, i).join('/');
      if (!seen.has(d)) out.push(E(d, 'dir'));
      seen.add(d);
    }
    if (!seen.has(e.path)) out.push(e);
    seen.add(e.path);
  }
  return out;
}

/** Every shape a snapshot holds: sysfs names, empty and block-sized files, binary config, long names and targets. */
const ENTRIES: TarEntry[] = withParents([
  E('sys', 'dir'),
  E('sys/devices', 'dir'),
  E('sys/devices/pci0000:17', 'dir'),
  E('sys/devices/pci0000:17/config', 'file', { data: bytes(4096) }),
  E('sys/devices/pci0000:17/empty', 'file', { data: new Uint8Array(0), mode: 0o444 }),
  E('sys/devices/pci0000:17/one', 'file', { data: bytes(1), mode: 0o400 }),
  E('sys/devices/pci0000:17/block', 'file', { data: bytes(512) }),
  E('sys/devices/pci0000:17/block1', 'file', { data: bytes(513), mode: 0o200 }),
  E('sys/devices/pci0000:17/big', 'file', { data: bytes(100_000) }),
  E('sys/devices/pci0000:17/driver', 'link', { target: '../../bus/pci/drivers/nvidia', mode: 0o777 }),
  E('sys/devices/pci0000:17/lt100', 'link', { target: 'a'.repeat(100), mode: 0o777 }),
  E('sys/devices/pci0000:17/lt300', 'link', { target: `../${long(300)}`, mode: 0o777 }),
  E('sys/n', 'dir'),
  E(`sys/n/${'n'.repeat(96)}`, 'file', { data: bytes(3) }), // the name field holds exactly 100 bytes ("sys/n/" + 94 + …)
  E('sys/p', 'dir'),
  E(`sys/p/${long(180)}`, 'dir'),
  E(`sys/p/${long(180)}/f`, 'file', { data: bytes(10) }), // fits the ustar prefix split
  E(`sys/p/${long(180)}/${'z'.repeat(120)}`, 'file', { data: bytes(11) }), // component > 100: PAX path
  E(`sys/p/${long(180)}/lnk`, 'link', { target: '../../devices', mode: 0o777 }),
  E('sys/ü-näme', 'file', { data: bytes(5) }),
]);

function expectedListing(es: readonly TarEntry[]): string[] {
  const perm = (m: number): string => [6, 3, 0].map((s) => ['r', 'w', 'x'].map((c, i) => ((m >> s) & (4 >> i) ? c : '-')).join('')).join('');
  return es.map((e) => {
    const type = e.kind === 'dir' ? 'd' : e.kind === 'link' ? 'l' : '-';
    const name = e.kind === 'dir' ? `${e.path}/` : e.path;
    return `${type}${perm(e.kind === 'link' ? 0o777 : e.mode)} ${e.kind === 'file' ? (e.data?.length ?? 0) : 0} ${name}${e.kind === 'link' ? ` -> ${e.target}` : ''}`;
  });
}

/** `tar tvf` lines reduced to type+mode, size, name, target (owner and date columns vary by locale). */
function listing(out: string): string[] {
  return out.trimEnd().split('\n').map((l) => {
    const m = /^(\S{10}) \S+\s+(\d+) \S+ \S+ (.*)$/.exec(l);
    if (!m) throw new Error(`unexpected tar tv line: ${l}`);
    return `${m[1]} ${m[2]} ${m[3]}`;
  });
}

/** The tree on disk as archive entries (lstat, readlink, bytes), sorted by path. */
async function scan(root: string, rel = ''): Promise<TarEntry[]> {
  const out: TarEntry[] = [];
  for (const name of (await fsp.readdir(path.join(root, rel))).sort()) {
    const p = rel ? `${rel}/${name}` : name;
    const st = await fsp.lstat(path.join(root, p));
    if (st.isSymbolicLink()) out.push(E(p, 'link', { target: await fsp.readlink(path.join(root, p)), mode: 0o777 }));
    else if (st.isDirectory()) out.push(E(p, 'dir', { mode: st.mode & 0o7777 }), ...(await scan(root, p)));
    else out.push(E(p, 'file', { mode: st.mode & 0o7777, data: new Uint8Array(readFileSync(path.join(root, p))) }));
  }
  return out;
}

const norm = (es: readonly TarEntry[]): unknown[] =>
  [...es].sort((a, b) => a.path.localeCompare(b.path)).map((e) => ({ path: e.path, kind: e.kind, mode: e.kind === 'link' ? 0o777 : e.mode, target: e.target, data: e.data ? Buffer.from(e.data).toString('base64') : undefined }));

t.test('write then read gives the same entries, and the archive is whole 10240-byte records', async (t) => {
  const buf = writeTar(ENTRIES);
  t.equal(buf.length % 10240, 0);
  t.same(norm(readTar(buf)), norm(ENTRIES));
});

t.test('GNU tar lists and extracts what we write exactly', { skip: !haveTar && 'GNU tar not installed' }, async (t) => {
  const dir = t.testdir();
  const file = path.join(dir, 'ours.tar.gz');
  await fsp.writeFile(file, gzipSync(writeTar(ENTRIES)));
  t.same(listing(tar(['--numeric-owner', '-tzvf', file], dir)), expectedListing(ENTRIES), 'tar tzvf: types, modes, sizes, names, link targets');
  await fsp.mkdir(path.join(dir, 'x'));
  tar(['-xzpf', file, '-C', 'x'], dir);
  t.same(norm(await scan(path.join(dir, 'x'))), norm(ENTRIES), 'tar xzf: the same tree, byte for byte');
});

for (const format of ['gnu', 'posix', 'ustar'] as const) {
  t.test(`archives GNU tar writes (--format=${format}) read back identically`, { skip: !haveTar && 'GNU tar not installed' }, async (t) => {
    const dir = t.testdir();
    await fsp.mkdir(path.join(dir, 'src'));
    // ustar cannot hold a component over 100 bytes or a link target over 100: leave those to the other formats.
    const fits = (e: TarEntry): boolean => format !== 'ustar' || (e.path.split('/').every((s) => s.length <= 100) && (e.target?.length ?? 0) <= 100 && !/[^\x20-\x7e]/.test(e.path));
    const src = ENTRIES.filter(fits);
    for (const e of src) {
      const p = path.join(dir, 'src', e.path);
      if (e.kind === 'dir') await fsp.mkdir(p, { recursive: true });
      else if (e.kind === 'link') await fsp.symlink(e.target!, p);
      else await fsp.writeFile(p, e.data!, { mode: e.mode });
      if (e.kind !== 'link') await fsp.chmod(p, e.mode);
    }
    await fsp.link(path.join(dir, 'src/sys/devices/pci0000:17/one'), path.join(dir, 'src/sys/hard')); // GNU tar writes a hard link ('1')
    tar([`--format=${format}`, '-czf', '../theirs.tar.gz', 'sys'], path.join(dir, 'src'));
    const { gunzipSync } = await import('node:zlib');
    const raw = gunzipSync(readFileSync(path.join(dir, 'theirs.tar.gz')));
    t.ok(readTar(raw).some((e) => e.kind === 'hardlink'), 'the archive holds a hard link entry');
    const tree = SnapTree.fromTar(raw);
    const got = [...tree.walk()].map(([p, n]) => E(p.slice(1), n.kind, n.kind === 'dir' ? { mode: n.mode } : n.kind === 'file' ? { mode: n.mode, data: n.data } : { target: n.target, mode: 0o777 }));
    t.same(norm(got), norm(await scan(path.join(dir, 'src'))));
  });
}

t.test('corrupt archives are errors, never partial trees', async (t) => {
  const buf = writeTar(ENTRIES.slice(0, 4));
  const bad = buf.slice();
  bad[600] = bad[600]! ^ 0xff; // inside the second header
  t.throws(() => readTar(bad), TarError);
  t.throws(() => readTar(buf.subarray(0, 1024 + 512 + 100)), TarError, 'truncated inside a file body');
  t.throws(() => SnapTree.fromTar(writeTar([E('../etc/passwd', 'file', { data: bytes(1) })])), /unsafe path/);
});

t.test('an archive cut short at an entry\'s end or in its padding (no end-of-archive block) is an error, never a smaller tree', async (t) => {
  const buf = writeTar([E('a', 'file', { data: bytes(700) }), E('b', 'file', { data: bytes(100) })]);
  // a: header 512 + 1024 of data and padding; b: header 512 + 512; then the zero blocks.
  t.equal(readTar(buf).length, 2);
  t.throws(() => readTar(buf.subarray(0, 2560)), { message: exactly('truncated archive: no end-of-archive block after offset 2560') }, 'at the last entry\'s end');
  t.throws(() => readTar(buf.subarray(0, 1536)), { message: exactly('truncated archive: no end-of-archive block after offset 1536') }, 'at the first entry\'s end');
  t.throws(() => readTar(buf.subarray(0, 2048 + 100)), { message: exactly('truncated archive: no end-of-archive block after offset 2148') }, 'inside the last entry\'s padding');
  t.equal(readTar(buf.subarray(0, 3072)).length, 2, 'one zero block ends an archive');
});

t.test('two entries for one file or link are an error (tar keeps the last: a reader keeping either replays another node)', async (t) => {
  const same = (kind: TarEntry['kind'], a: Partial<TarEntry>, b: Partial<TarEntry>): Uint8Array => writeTar([E('d', 'dir'), E('d/x', kind, a), E('d/x', kind, b)]);
  t.throws(() => SnapTree.fromTar(same('file', { data: bytes(4) }, { data: bytes(4).reverse() })), { message: exactly('d/x: more than one entry in the archive') });
  t.throws(() => SnapTree.fromTar(same('file', { data: bytes(8) }, { data: bytes(4) })), { message: exactly('d/x: more than one entry in the archive') });
  t.throws(() => SnapTree.fromTar(same('link', { target: 'a' }, { target: 'b' })), { message: exactly('d/x: more than one entry in the archive') });
  t.equal([...SnapTree.fromTar(writeTar([E('d', 'dir'), E('d', 'dir'), E('d/x', 'file', { data: bytes(1) })])).walk()].length, 2, 'a directory listed twice is one directory');
});

t.test('the checksum is the same word-wise (aligned archive) and byte-wise (unaligned): every header checked both ways', async (t) => {
  const buf = writeTar(ENTRIES);
  // The same archive 1 byte into a larger buffer: no 4-byte alignment, the byte-wise sum.
  const shifted = new Uint8Array(buf.length + 1);
  shifted.set(buf, 1);
  const unaligned = shifted.subarray(1);
  t.same(norm(readTar(unaligned)), norm(readTar(buf)));
  // A flipped bit anywhere in a header but its checksum field is found both ways; in the field it is a bad number
  // or a mismatch, an error either way.
  for (const at of [0, 100, 147, 150, 156, 300, 511, 512 + 257]) {
    const bad = buf.slice();
    bad[at] = bad[at]! ^ 0x10;
    t.throws(() => readTar(bad), TarError, `aligned, byte ${at}`);
    const badU = new Uint8Array(bad.length + 1);
    badU.set(bad, 1);
    t.throws(() => readTar(badU.subarray(1)), TarError, `unaligned, byte ${at}`);
  }
});
