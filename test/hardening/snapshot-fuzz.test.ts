// Seeded mutations of a real snapshot (the bundled H200 capture, packed as `gdrgate snapshot` packs it) and
// generated hostile shapes, plain and gzipped: opening one either succeeds, and then every Host call on every
// path it holds answers, or throws SnapshotError. Never another error (a RangeError is a stack overflow), never
// a hang, and within a memory bound.
import t from 'tap';
import { gzipSync } from 'node:zlib';
import { parseSnapshot, SnapshotError, type SnapshotHost } from '../../src/snapshot/open.js';
import { readTar } from '../../src/snapshot/tar.js';
import { HOSTILE, realSnapshot, TRICKY } from './_snapshots.js';
import { mulberry32 } from '../helpers/seeded.js';

/** mulberry32 (test/helpers/seeded.ts): a fixed seed makes every failure reproducible. */
const rng = mulberry32;

const SEED = 0x5eed5;
/** A fixed number of seeded mutations, not a time budget: the same cases run on an idle and on a loaded machine. */
const MUTATIONS = 80;
/** Heap and buffers together, checked after every case: a snapshot of a few MB must never cost a GiB. */
const MEMORY_BOUND = 768 * 1024 * 1024;
const FIELDS: [offset: number, length: number][] = [[0, 100], [100, 8], [124, 12], [156, 1], [157, 100], [257, 8], [345, 155]];
const JUNK = ['..', '/', '../../..', '\0', 'x'.repeat(99), '7777777777', '\x80\xff\xff\xff', 'L', 'K', 'x', '2', '1', '5', '/etc/passwd', 'a/./b'];

/** Header offsets of an archive (walking sizes as a reader does), so mutations can land on fields. */
function headers(tar: Uint8Array): number[] {
  const out: number[] = [];
  let at = 0;
  while (at + 512 <= tar.length && tar[at] !== 0) {
    out.push(at);
    const size = parseInt(Buffer.from(tar.subarray(at + 124, at + 136)).toString('latin1').replace(/\0.*$/s, '').trim() || '0', 8);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** Recomputes a header's checksum, so a mutated field is read instead of stopping at the checksum. */
function resum(b: Uint8Array, at: number): void {
  b.fill(0x20, at + 148, at + 156);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += b[at + i]!;
  b.set(Buffer.from(sum.toString(8).padStart(6, '0') + '\0 ', 'latin1'), at + 148);
}

function mutate(src: Uint8Array, heads: number[], r: () => number): Uint8Array {
  let b = Uint8Array.from(src);
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const op = Math.floor(r() * 6);
    const h = heads[Math.floor(r() * heads.length)]!;
    if (op <= 1 && h + 512 <= b.length) {
      // A header field rewritten with junk, checksum fixed: the reader has to deal with what it says.
      const [off, len] = FIELDS[Math.floor(r() * FIELDS.length)]!;
      const junk = Buffer.from(JUNK[Math.floor(r() * JUNK.length)]!, 'latin1').subarray(0, len);
      b.set(junk, h + off + Math.floor(r() * Math.max(1, len - junk.length)));
      resum(b, h);
    } else if (op <= 2) {
      for (let k = 0; k < 8; k++) b[Math.floor(r() * b.length)] = Math.floor(r() * 256); // raw bytes, checksums as they fall
    } else if (op === 3) {
      b = b.subarray(0, Math.floor(r() * b.length)); // truncated
    } else if (op === 4) {
      // One entry's blocks repeated: duplicate paths, a file where a directory was.
      const h2 = heads[Math.floor(r() * heads.length)]!;
      const piece = b.subarray(Math.min(h, h2), Math.max(h, h2) + 512);
      const at = heads[Math.floor(r() * heads.length)]!;
      b = Buffer.concat([b.subarray(0, at), piece, b.subarray(at)]);
    } else {
      const f = Object.values(TRICKY)[Math.floor(r() * Object.keys(TRICKY).length)]!();
      b = Buffer.concat([b.subarray(0, heads[heads.length - 1]! + 512), f.subarray(512)]); // a tricky tail, its manifest dropped
    }
  }
  return b;
}

/** Every Host call on every path the archive names (and one below each): all must answer, none throw. */
async function exercise(h: SnapshotHost, tar: Uint8Array): Promise<void> {
  let paths: string[];
  try {
    paths = readTar(tar).map((e) => `/${e.path}`);
  } catch {
    paths = ['/'];
  }
  for (const p of paths.slice(0, 400)) {
    for (const q of [p, `${p}/x`, `${p}/`]) {
      await h.list(q);
      await h.readBytes(q, 64);
      await h.readLink(q);
      await h.realPath(q);
      await h.lstat(q);
      await h.stat(q);
    }
  }
}

t.test('mutated and hostile snapshots: opened and answered, or SnapshotError; bounded in memory, never hung', async (t) => {
  const { tar } = await realSnapshot();
  const heads = headers(tar);
  t.ok(heads.length > 100, `${heads.length} entries in the real snapshot`);
  const r = rng(SEED);
  const seen = { opened: 0, refused: 0 };
  let peak = 0;
  const bad: string[] = [];
  const run = async (label: string, input: Uint8Array, plain = input): Promise<void> => {
    try {
      const h = parseSnapshot(label, input);
      seen.opened++;
      await exercise(h, plain);
    } catch (e) {
      if (e instanceof SnapshotError) seen.refused++;
      else bad.push(`${label}: ${(e as Error).name}: ${(e as Error).message.slice(0, 200)}`);
    }
    const m = process.memoryUsage();
    peak = Math.max(peak, m.heapUsed + m.arrayBuffers);
  };
  for (const [name, make] of Object.entries({ ...HOSTILE, ...TRICKY })) {
    // Their own tests (snapshot-bounds): on a loaded machine each costs seconds, the mutations' time.
    if (name === 'more entries than the cap' || name === 'implied directories past the entry cap') continue;
    const b = make();
    await run(name, b);
    await run(`${name} (gz)`, gzipSync(b, { level: 1 }), b);
  }
  let i = 0;
  for (; i < MUTATIONS; i++) {
    const m = mutate(tar, heads, r);
    await run(`seed ${SEED} case ${i}`, r() < 0.3 ? gzipSync(m, { level: 1 }) : m, m);
  }
  t.same(bad, [], 'nothing but SnapshotError escapes');
  t.equal(i, MUTATIONS, `${i} mutations (${seen.opened} opened, ${seen.refused} refused)`);
  t.ok(seen.opened > 0 && seen.refused > 0, 'both outcomes occur: the mutations reach past the first check');
  t.ok(peak < MEMORY_BOUND, `peak heap + buffers ${Math.round(peak / 2 ** 20)} MiB`);
  // No time bound per case: a hang never returns (tap's timeout fails the file); speed is `npm run bench`'s.
});
