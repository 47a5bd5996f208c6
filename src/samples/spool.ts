// Local sample spool: atomic JSON-line appends from concurrent epilogs, size-bounded rotation under a lock, tolerant reader.
import {
  closeSync, constants, fstatSync, openSync, readFileSync, readSync, readdirSync, renameSync, statSync, unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { parseSampleLine, sampleLine, type Sample } from './sample.js';

export interface SpoolOptions {
  readonly dir: string;
  /** Rotate when the live file would grow past this many bytes (default 16 MiB). */
  readonly maxBytes?: number;
  /** Rotated generations kept: samples.1.jsonl (newest) … samples.<keep>.jsonl (default 3). */
  readonly keep?: number;
  /** A lock file older than this, or whose pid is gone, is stale (default 30 s; a rotation takes microseconds). */
  readonly staleLockMs?: number;
}

export type AppendResult =
  | { readonly ok: true; readonly written: number; readonly bytes: number; readonly rejected: number; readonly notes: readonly string[] }
  | {
      readonly ok: false;
      readonly code: string;
      readonly message: string;
      readonly written: 0;
      /** Bytes that did reach the file (a short write leaves whole lines before a torn one; the reader keeps those). */
      readonly bytes: number;
      readonly rejected: number;
      readonly notes: readonly string[];
    };

export interface ReadReport {
  /** Files read, oldest first. */
  readonly files: readonly string[];
  readonly samples: number;
  /** Last line of a file without its newline: a crash, a full disk, or a writer caught mid-write. Skipped. */
  readonly torn: number;
  /** Complete lines that are not a valid sample. Skipped. */
  readonly corrupt: number;
  readonly problems: readonly string[];
}

export const LIVE = 'samples.jsonl';
export const LOCK = 'samples.lock';
/**
 * Longest line we write. Linux serialises write(2) on a regular file under the inode lock, so one O_APPEND write
 * never interleaves with another on a local filesystem (ext4, xfs, tmpfs; not NFS); lines are kept under PIPE_BUF
 * anyway so the guarantee also holds where only PIPE_BUF-sized writes are atomic.
 */
export const MAX_LINE_BYTES = 4096;
const CHUNK = 1 << 20;

const errCode = (e: unknown): string => (e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : 'EUNKNOWN');
const errMsg = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const rotated = (dir: string, n: number): string => join(dir, `samples.${n}.jsonl`);

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errCode(e) === 'EPERM';
  }
}

/** Takes the lock with O_CREAT|O_EXCL; breaks a stale one once. Returns a release function, or null if held. */
function lock(dir: string, staleMs: number): (() => void) | null {
  const path = join(dir, LOCK);
  const token = `${process.pid} ${Date.now()} ${Math.random().toString(36).slice(2)}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
      try {
        writeSync(fd, token);
      } finally {
        closeSync(fd);
      }
      return () => {
        try {
          if (readFileSync(path, 'utf8') === token) unlinkSync(path);
        } catch {
          // Already gone (broken as stale by someone else): nothing to release.
        }
      };
    } catch (e) {
      if (errCode(e) !== 'EEXIST' || attempt > 0) return null;
      try {
        const age = Date.now() - statSync(path).mtimeMs;
        const pid = Number(readFileSync(path, 'utf8').split(' ')[0]);
        if (age < staleMs && Number.isInteger(pid) && pid > 0 && pidAlive(pid)) return null;
        // Rename first so only one breaker wins; the loser's rename fails with ENOENT and it tries O_EXCL again.
        const aside = `${path}.stale.${process.pid}.${Date.now()}`;
        renameSync(path, aside);
        unlinkSync(aside);
      } catch {
        // Lock vanished or changed under us: one more O_EXCL try decides.
      }
    }
  }
  return null;
}

/** samples.jsonl → samples.1.jsonl → … → samples.<keep>.jsonl (dropped). Caller holds the lock. */
function rotate(dir: string, keep: number): void {
  try {
    unlinkSync(rotated(dir, keep));
  } catch {
    // Nothing that old yet.
  }
  for (let n = keep - 1; n >= 1; n--) {
    try {
      renameSync(rotated(dir, n), rotated(dir, n + 1));
    } catch {
      // Generation n does not exist yet.
    }
  }
  renameSync(join(dir, LIVE), rotated(dir, 1));
}

/** Rotates when the live file plus this batch would pass maxBytes; re-checked under the lock so two rotators agree. */
function maybeRotate(o: SpoolOptions, incoming: number, notes: string[]): void {
  const max = o.maxBytes ?? 16 << 20;
  const live = join(o.dir, LIVE);
  const over = (): boolean => {
    const st = statSync(live, { throwIfNoEntry: false });
    return st !== undefined && st.isFile() && st.size > 0 && st.size + incoming > max;
  };
  if (!over()) return;
  const release = lock(o.dir, o.staleLockMs ?? 30_000);
  if (release === null) {
    notes.push('rotation skipped: spool lock held by another process');
    return;
  }
  try {
    if (over()) rotate(o.dir, Math.max(1, o.keep ?? 3));
  } catch (e) {
    notes.push(`rotation failed: ${errMsg(e)}`);
  } finally {
    release();
  }
}

/**
 * "\n" when the file ends inside a line (an earlier short write or crash), so that torn line ends before ours and
 * costs only itself. Two writers may both add one: the reader skips blank lines.
 */
function healTornTail(fd: number): string {
  const st = fstatSync(fd);
  if (!st.isFile() || st.size === 0) return '';
  const last = Buffer.alloc(1);
  return readSync(fd, last, 0, 1, st.size - 1) === 1 && last[0] !== 0x0a ? '\n' : '';
}

/**
 * Appends the batch as one write(2) on an O_APPEND descriptor. Never throws: a full disk, a missing directory or a
 * short write come back as { ok: false }. Lines over MAX_LINE_BYTES or with non-finite numbers are rejected, counted.
 */
export function appendSamples(o: SpoolOptions, samples: readonly Sample[]): AppendResult {
  const notes: string[] = [];
  let rejected = 0;
  let text = '';
  let count = 0;
  for (const s of samples) {
    const line = sampleLine(s);
    if (line === null || Buffer.byteLength(line) > MAX_LINE_BYTES) rejected++;
    else {
      text += line;
      count++;
    }
  }
  if (count === 0) return { ok: true, written: 0, bytes: 0, rejected, notes };
  let fd: number | null = null;
  try {
    maybeRotate(o, Buffer.byteLength(text), notes);
    fd = openSync(join(o.dir, LIVE), constants.O_RDWR | constants.O_APPEND | constants.O_CREAT, 0o644);
    const buf = Buffer.from(healTornTail(fd) + text);
    const n = writeSync(fd, buf);
    if (n !== buf.length) {
      // Only ENOSPC/EFBIG/EDQUOT cut a regular-file write short. End the torn line so the next batch starts clean.
      try {
        writeSync(fd, '\n');
      } catch {
        // Still full: the reader skips and counts the torn last line.
      }
      return { ok: false, code: 'ESHORTWRITE', message: `short write: ${n} of ${buf.length} bytes`, written: 0, bytes: n, rejected, notes };
    }
    return { ok: true, written: count, bytes: n, rejected, notes };
  } catch (e) {
    return { ok: false, code: errCode(e), message: errMsg(e), written: 0, bytes: 0, rejected, notes };
  } finally {
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch {
        // Close errors after a failed write add nothing.
      }
    }
  }
}

/** Spool files, oldest first: the highest generation down to samples.1.jsonl, then the live file. */
export function spoolFiles(dir: string): string[] {
  const gens = readdirSync(dir)
    .map((f) => ({ f, m: f.match(/^samples\.(\d+)\.jsonl$/) }))
    .filter((x): x is { f: string; m: RegExpMatchArray } => x.m !== null)
    .sort((a, b) => Number(b.m[1]) - Number(a.m[1]))
    .map((x) => join(dir, x.f));
  const live = join(dir, LIVE);
  return statSync(live, { throwIfNoEntry: false }) !== undefined ? [...gens, live] : gens;
}

/** Streams every sample to onSample in 1 MiB chunks; skips and counts torn and corrupt lines. Never throws. */
export function readSpool(dir: string, onSample: (s: Sample) => void): ReadReport {
  const files: string[] = [];
  const problems: string[] = [];
  let samples = 0;
  let torn = 0;
  let corrupt = 0;
  const take = (line: string): void => {
    if (line === '') return;
    const s = parseSampleLine(line);
    if (s === null) corrupt++;
    else {
      samples++;
      onSample(s);
    }
  };
  let list: string[] = [];
  try {
    list = spoolFiles(dir);
  } catch (e) {
    problems.push(`cannot list ${dir}: ${errMsg(e)}`);
  }
  const chunk = Buffer.allocUnsafe(CHUNK);
  for (const path of list) {
    let fd: number | null = null;
    try {
      fd = openSync(path, constants.O_RDONLY);
      if (!fstatSync(fd).isFile()) {
        problems.push(`${path}: not a regular file, skipped`);
        continue;
      }
      files.push(path);
      let carry = Buffer.alloc(0);
      for (let n = readSync(fd, chunk, 0, CHUNK, null); n > 0; n = readSync(fd, chunk, 0, CHUNK, null)) {
        const data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
        const last = data.lastIndexOf(0x0a);
        if (last < 0) {
          carry = Buffer.from(data);
        } else {
          // A newline byte never sits inside a UTF-8 sequence, so the text up to it decodes whole.
          for (const line of data.toString('utf8', 0, last).split('\n')) take(line);
          carry = Buffer.from(data.subarray(last + 1));
        }
        if (carry.length > CHUNK) {
          corrupt++;
          carry = Buffer.alloc(0);
          problems.push(`${path}: over ${CHUNK} bytes without a newline, dropped`);
        }
      }
      if (carry.length > 0) torn++;
    } catch (e) {
      problems.push(`${path}: ${errMsg(e)}`);
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }
  return { files, samples, torn, corrupt, problems };
}
