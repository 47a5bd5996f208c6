// A snapshot file is bounded before it costs anything: the hostile shapes, a tar that is not a snapshot,
// a gzip bomb. Each is refused by the snapshot error class, naming the limit it ran into, and every command says so with exit 2.
import t, { type Test } from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { MAX_TAR_BYTES } from '../../src/snapshot/limits.js';
import { parseSnapshot, SnapshotError } from '../../src/snapshot/open.js';
import { cli } from '../helpers/cli.js';
import { H200 } from '../helpers/paths.js';
import { EMPTY_TAR, HOSTILE, realSnapshot, TRICKY, UNRELATED_TAR } from './_snapshots.js';

const refused = (t: Test, name: string, buf: Uint8Array, why: string): void => {
  let err: unknown = null;
  try {
    parseSnapshot(name, buf);
  } catch (e) {
    err = e;
  }
  t.ok(err instanceof SnapshotError, `${name}: the snapshot error class (${String(err)})`);
  // The limit that stopped it, named: without the limits these inputs are no error at all (they took minutes to
  // read in full), so the message is the proof of the bound; how fast is `npm run bench`'s, not a test's.
  t.equal(String(err), `ConfigError: ${name}: ${why}`, `${name}: says why`);
};

t.test("the issue's hostile shapes are refused while reading, plain or gzipped", async (t) => {
  const why: Record<string, string> = {
    'a path of 200,000 components': 'not a snapshot archive: a 400012-byte long-name header (more than 12288)',
    'a link target of a million components': 'not a snapshot archive: a 2000017-byte long-name header (more than 12288)',
    'a name longer than NAME_MAX': `not a snapshot archive: a path with a 300-byte component (more than 255) in archive: sys/${'n'.repeat(196)}…`,
    'implied directories past the entry cap': 'not a snapshot archive: more than 100000 entries (directories included)',
    'more entries than the cap': 'not a snapshot archive: more than 100000 entries (directories included)',
  };
  for (const [name, make] of Object.entries(HOSTILE)) {
    const tar = make();
    refused(t, name, tar, why[name]!);
    if (tar.length < 1 << 20) refused(t, `${name} (gz)`, gzipSync(tar, { level: 1 }), why[name]!);
  }
  // 555 bytes: the size, one deep path in a gzip stream.
  t.ok(gzipSync(HOSTILE['a path of 200,000 components']!(), { level: 9 }).length < 2000, 'the deep path is a small file');
});

t.test('a tar without a gdrgate manifest is not a snapshot (it would replay as an empty, healthy node)', async (t) => {
  refused(t, 'empty.tar', EMPTY_TAR(), 'not a snapshot archive: no manifest.json: not written by gdrgate snapshot');
  refused(t, 'unrelated.tar', UNRELATED_TAR(), 'not a snapshot archive: no manifest.json: not written by gdrgate snapshot');
  const { tar } = await realSnapshot();
  const text = Buffer.from(tar).toString('latin1');
  const at = text.indexOf('"kind": "snapshot"');
  t.ok(at > 0, 'the real snapshot names its kind');
  const other = Buffer.from(tar);
  other.write('"kind": "snapsho!"', at, 'latin1'); // same length: the tar stays valid, only its checksum-free body changes
  refused(t, 'other-kind.tar', other, 'not a snapshot archive: manifest.json is not a gdrgate snapshot manifest (tool "gdrgate", kind "snapshot")');
  t.ok(parseSnapshot('real.tar', tar), 'the real one opens');
});

t.test('a gzip bomb stops inside zlib at the cap', async (t) => {
  const bomb = gzipSync(Buffer.alloc(MAX_TAR_BYTES + 1024), { level: 1 });
  t.ok(bomb.length < 1 << 20, `${bomb.length} bytes on disk`);
  refused(t, 'bomb.tar.gz', bomb, `inflates to more than ${MAX_TAR_BYTES} bytes`);
});

t.test('within the limits, links are bounded: ELOOP, ENAMETOOLONG, never followed out', async (t) => {
  const h = (k: string) => parseSnapshot(k, TRICKY[k]!());
  const chain = h('a 40-link chain and a loop');
  t.same(await chain.readText('/sys/l0'), { ok: false, missing: false, reason: 'ELOOP: too many levels of symbolic links, snapshot /sys/l0' }, 'a 46-link chain: ELOOP');
  t.same(await chain.realPath('/sys/self'), { ok: false, missing: false, reason: 'ELOOP: too many levels of symbolic links, snapshot /sys/self' }, 'a link to itself: ELOOP');
  const grow = h('links that grow the pending path');
  t.same(await grow.realPath('/sys/g0'), { ok: false, missing: false, reason: 'ENAMETOOLONG: file name too long, snapshot /sys/g0' }, 'a path that grows with each link: ENAMETOOLONG');
  const out = h('an absolute link and one that climbs out');
  t.same(await out.readText('/sys/up/hostname'), { ok: false, missing: false, reason: 'unreadable: leaves the root: a link target climbs above it (resolving /sys/up/hostname)' }, '.. past the top');
  t.same(await out.readText('/sys/abs/hostname'), { ok: false, missing: false, reason: 'not recorded by this snapshot (taken by gdrgate unknown): /etc' }, 'an absolute link: inside the archive, as in a chroot');
  t.same(await out.readText('/sys/ok'), { ok: true, value: 'x\n' });
  t.same(await out.realPath(`/sys/${'a/'.repeat(3000)}`), { ok: false, missing: false, reason: `ENAMETOOLONG: file name too long, snapshot /sys/${'a/'.repeat(97)}a` }, 'a path asked for past PATH_MAX');
});

t.test('check, topo, compare and baseline capture: a bad snapshot is a usage error (exit 2), never 3, never healthy', async (t) => {
  const dir = t.testdir({});
  const files: Record<string, Uint8Array> = {
    'empty.tar': EMPTY_TAR(),
    'unrelated.tar.gz': gzipSync(UNRELATED_TAR()),
    'deep.tar.gz': gzipSync(HOSTILE['a path of 200,000 components']!()),
    'longlink.tar.gz': gzipSync(HOSTILE['a link target of a million components']!()),
  };
  for (const [name, data] of Object.entries(files)) writeFileSync(path.join(dir, name), data);
  const NOT_SNAPSHOT: Record<string, string> = {
    'empty.tar': 'no manifest.json: not written by gdrgate snapshot',
    'unrelated.tar.gz': 'no manifest.json: not written by gdrgate snapshot',
    'deep.tar.gz': 'a 400012-byte long-name header (more than 12288)',
    'longlink.tar.gz': 'a 2000017-byte long-name header (more than 12288)',
  };
  for (const name of Object.keys(files)) {
    const f = path.join(dir, name);
    const runs = name === 'empty.tar' || name === 'longlink.tar.gz'
      ? [['check', '--root', f], ['topo', '--root', f], ['compare', H200, f], ['baseline', 'capture', '--root', f, '--class', 'x']]
      : [['check', '--root', f]];
    for (const args of runs) {
      const r = cli(args);
      t.equal(r.code, 2, `${args[0]} ${name}: exit 2`);
      t.equal(r.stderr, `gdrgate: --root ${f}: not a snapshot archive: ${NOT_SNAPSHOT[name]}\n`, `${args[0]} ${name}: says why`);
      t.notMatch(r.stdout, /healthy/, `${args[0]} ${name}: never healthy`);
    }
  }
});
