// The two reads `fleet report` makes of every node when summaries are there: a summary (small, size-capped, read in
// one go) and the SHA-256 of the snapshot beside it (read in chunks, never held whole). Both through openRegular:
// no link followed, no FIFO read, only regular files.
import { fileWhy } from './file-why.js';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { errno, openRegular, type FileResult } from './files.js';

const CHUNK = 256 * 1024;
/** One read buffer for every digest taken on this thread (a fleet report hashes one snapshot per node). */
let chunk: Buffer | null = null;

function failed<T>(file: string, e: unknown): FileResult<T> {
  if (errno(e) === 'ENOENT') return { ok: false, kind: 'missing', why: `${file}: no such file (ENOENT)` };
  return { ok: false, kind: errno(e) === 'EUNSAFE' ? 'unsafe' : 'io', why: fileWhy(file, e) };
}

/** `use` on the file opened read-only as a regular file (no link, no FIFO), closed after; any error a FileResult. */
function withFile<T>(file: string, use: (fd: number) => FileResult<T>): FileResult<T> {
  let fd: number;
  try {
    fd = openRegular(file, fs.constants.O_RDONLY);
  } catch (e) {
    return failed(file, e);
  }
  try {
    return use(fd);
  } catch (e) {
    return failed(file, e);
  } finally {
    fs.closeSync(fd);
  }
}

/** The whole file when it holds at most `max` bytes (the size checked on the open descriptor, then on what came). */
export function readCapped(file: string, max: number): FileResult<Buffer> {
  return withFile(file, (fd) => {
    const size = fs.fstatSync(fd).size;
    if (size > max) return { ok: false, kind: 'unsafe', why: `${file} is ${size} bytes, more than ${max}` };
    const buf = Buffer.allocUnsafe(size + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = fs.readSync(fd, buf, n, buf.length - n, null);
    if (n > size) return { ok: false, kind: 'unsafe', why: `${file} grew while it was read` };
    return { ok: true, value: buf.subarray(0, n) };
  });
}

/** SHA-256 (hex) and length of the file's bytes, at most `max` of them. */
export function sha256File(file: string, max: number): FileResult<{ readonly sha256: string; readonly bytes: number }> {
  return withFile(file, (fd) => {
    const h = createHash('sha256');
    const buf = (chunk ??= Buffer.allocUnsafe(CHUNK));
    let total = 0;
    for (let r = fs.readSync(fd, buf, 0, CHUNK, null); r > 0; r = fs.readSync(fd, buf, 0, CHUNK, null)) {
      total += r;
      if (total > max) return { ok: false, kind: 'unsafe', why: `${file} is larger than ${max} bytes` };
      h.update(buf.subarray(0, r));
    }
    return { ok: true, value: { sha256: h.digest('hex'), bytes: total } };
  });
}
