// Local sample spool: atomic JSON-line appends from concurrent epilogs, size-bounded rotation under a lock, tolerant reader.
import { join } from 'node:path';
import { parseSampleLine, sampleLine, type Sample } from './sample.js';
import { listNames } from '../host/dirs.js';
import { lstatIfAny, moveNoClobber, removeFile } from '../host/entries.js';
import { closeFd, fstatFd, O_RDONLY, readFd, writeBytes, writeText } from '../host/fd.js';
import { errno as errnoCode, openAppend, openRegular, quietly } from '../host/files.js';
import { fileWhy } from '../host/file-why.js';
import { takeLock } from '../host/lock.js';

export interface SpoolOptions {
  readonly dir: string;
  /** Rotate when the live file would grow past this many bytes (default 16 MiB). */
  readonly maxBytes?: number;
  /** Rotated generations kept: samples.1.jsonl (newest) … samples.<keep>.jsonl (default 3). */
  readonly keep?: number;
  /** A lock file older than this, or whose pid is gone, is stale (default 30 s; a rotation takes microseconds). */
  readonly staleLockMs?: number;
}

interface AppendBase {
  readonly rejected: number;
  readonly notes: readonly string[];
  /**
   * The samples taken whose whole line did not reach the file (all of them when nothing was written; after a short
   * write, those from the torn line on): what a reader of the spool will not see. Never a sample whose line is there.
   */
  readonly unwritten: readonly Sample[];
}
/** On failure `bytes` is what reached the file: a short write leaves whole lines before a torn one; the reader keeps them. */
export type AppendResult =
  | (AppendBase & { readonly ok: true; readonly written: number; readonly bytes: number })
  | (AppendBase & { readonly ok: false; readonly code: string; readonly message: string; readonly written: 0; readonly bytes: number });

export interface ReadReport {
  /** Files read, oldest first. */
  readonly files: readonly string[];
  readonly samples: number;
  /**
   * Lines cut by a crash, a full disk or a writer caught mid-write: the last line of a file without its newline, or one
   * the next append closed (it ends in TORN_MARK). Skipped.
   */
  readonly torn: number;
  /** Complete lines that are not a valid sample. Skipped. */
  readonly corrupt: number;
  readonly problems: readonly string[];
}

export const LIVE = 'samples.jsonl';
export const LOCK = 'samples.lock';
// Longest line we write. Linux runs a regular-file write(2) under the inode lock, so one O_APPEND write never interleaves
// with another on a local filesystem (ext4, xfs, tmpfs; not NFS); lines stay under PIPE_BUF for systems that promise less.
export const MAX_LINE_BYTES = 4096;
const CHUNK = 1 << 20;
/** The read buffer readSpoolFiles may be given. */
export const SPOOL_READ_BYTES = CHUNK;
/** A spool file larger than this was not written by the rotating appender (16 MiB files): not read, whatever it holds. */
export const MAX_READ_BYTES = 64 << 20;
/**
 * What an append writes after a line a crash or a full disk cut, before its newline: the line stays a torn one for every
 * later read (a bare newline made it a complete line that is no sample, counted corrupt). No line JSON.stringify writes
 * holds a raw tab. A line that is this alone is a second writer's close of the same cut line: skipped like a blank one.
 */
export const TORN_MARK = '\t#torn';

const errMsg = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const rotated = (dir: string, n: number): string => join(dir, `samples.${n}.jsonl`);
const closeQuietly = (fd: number | null): void => (fd === null ? undefined : quietly(() => closeFd(fd)));
/**
 * samples.jsonl → samples.1.jsonl → … → samples.<keep>.jsonl (dropped); only existing generations are touched. Caller holds
 * the lock. Each move is moveNoClobber's (never replacing): two rotations that overlap despite the lock cannot overwrite a generation.
 */
function rotate(dir: string, keep: number): string | null {
  for (const n of generations(dir)) {
    if (n >= keep) removeFile(rotated(dir, n));
    else if (moveNoClobber(rotated(dir, n), rotated(dir, n + 1)) === 'exists') return `rotation stopped: samples.${n + 1}.jsonl exists`;
  }
  return moveNoClobber(join(dir, LIVE), rotated(dir, 1)) === 'exists' ? 'rotation stopped: samples.1.jsonl exists' : null;
}

/** Generation numbers present in the directory, highest (oldest) first. */
function generations(dir: string): number[] {
  return listNames(dir)
    .map((f) => f.match(/^samples\.(\d+)\.jsonl$/)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => b - a);
}

/** Rotates when the live file plus this batch would pass maxBytes; re-checked under the lock so two rotators agree. */
function maybeRotate(o: SpoolOptions, incoming: number, notes: string[]): void {
  const max = o.maxBytes ?? 16 << 20;
  const live = join(o.dir, LIVE);
  const over = (): boolean => {
    const st = lstatIfAny(live);
    return st !== undefined && st.isFile() && st.size > 0 && st.size + incoming > max;
  };
  if (!over()) return;
  const l = takeLock(join(o.dir, LOCK), { staleMs: o.staleLockMs ?? 30_000, holder: (pid) => `spool lock held by another process${pid}` });
  if (!l.ok) {
    notes.push(`rotation skipped: ${l.why}`);
    return;
  }
  try {
    const stopped = over() ? rotate(o.dir, Math.max(1, o.keep ?? 3)) : null;
    if (stopped !== null) notes.push(stopped);
  } catch (e) {
    notes.push(`rotation failed: ${errMsg(e)}`);
  } finally {
    l.release();
  }
}

/**
 * TORN_MARK and "\n" when the file ends inside a line (an earlier short write or crash), so that torn line ends before
 * ours, costs only itself and is still read as torn. Two writers may both add one: the reader skips a line that is the
 * mark alone.
 */
function healTornTail(fd: number): string {
  const st = fstatFd(fd);
  if (!st.isFile() || st.size === 0) return '';
  const last = Buffer.alloc(1);
  return readFd(fd, last, 0, 1, st.size - 1) === 1 && last[0] !== 0x0a ? `${TORN_MARK}\n` : '';
}

/**
 * Appends the batch as one write(2) on an O_APPEND descriptor. Never throws: a full disk, a missing directory or a
 * short write come back as { ok: false }. Lines over MAX_LINE_BYTES or with non-finite numbers are rejected, counted.
 */
export function appendSamples(o: SpoolOptions, samples: readonly Sample[]): AppendResult {
  const notes: string[] = [];
  let rejected = 0;
  const taken: { s: Sample; bytes: number }[] = [];
  let text = '';
  for (const s of samples) {
    const line = sampleLine(s);
    if (line === null || Buffer.byteLength(line) > MAX_LINE_BYTES) rejected++;
    else {
      text += line;
      taken.push({ s, bytes: Buffer.byteLength(line) });
    }
  }
  if (rejected) notes.push(`${rejected} sample(s) not spooled: a line over ${MAX_LINE_BYTES} bytes, or a value a line cannot hold`);
  const all = taken.map((x) => x.s);
  if (taken.length === 0) return { ok: true, written: 0, bytes: 0, rejected, notes, unwritten: [] };
  let fd: number | null = null;
  try {
    maybeRotate(o, Buffer.byteLength(text), notes);
    fd = openAppend(join(o.dir, LIVE), 0o644, true);
    const heal = healTornTail(fd);
    const buf = Buffer.from(heal + text);
    const n = writeBytes(fd, buf);
    if (n !== buf.length) {
      // Only ENOSPC/EFBIG/EDQUOT cut a regular-file write short. End the torn line if there is room; if not, the
      // reader skips and counts it, and the next append starts on a fresh line (healTornTail).
      const end = fd;
      quietly(() => writeText(end, `${TORN_MARK}\n`));
      // The lines wholly within the n bytes are in the spool: only the rest are this run's own to add.
      let room = n - Buffer.byteLength(heal);
      let whole = 0;
      while (whole < taken.length && taken[whole]!.bytes <= room) room -= taken[whole++]!.bytes;
      return { ok: false, code: 'ESHORTWRITE', message: `short write: ${n} of ${buf.length} bytes`, written: 0, bytes: n, rejected, notes, unwritten: all.slice(whole) };
    }
    return { ok: true, written: taken.length, bytes: n, rejected, notes, unwritten: [] };
  } catch (e) {
    // writeSync throws before it writes: nothing of this run reached the file.
    return { ok: false, code: errnoCode(e), message: errMsg(e), written: 0, bytes: 0, rejected, notes, unwritten: all };
  } finally {
    closeQuietly(fd);
  }
}

/** Spool files, oldest first: the highest generation down to samples.1.jsonl, then the live file. */
export function spoolFiles(dir: string): string[] {
  const live = join(dir, LIVE);
  const gens = generations(dir).map((n) => rotated(dir, n));
  return lstatIfAny(live) !== undefined ? [...gens, live] : gens;
}

/** Streams every sample to onSample in 1 MiB chunks; skips and counts torn and corrupt lines. Never throws. */
export function readSpool(dir: string, onSample: (s: Sample) => void): ReadReport {
  const problems: string[] = [];
  let list: string[] = [];
  try {
    list = spoolFiles(dir);
  } catch (e) {
    problems.push(`cannot list ${dir}: ${errMsg(e)}`);
  }
  return readSpoolFiles(list, onSample, problems);
}

/**
 * readSpool over named spool files (copies gathered from many nodes), oldest first; the same bounds and checks.
 * `buffer`: a read buffer of at least SPOOL_READ_BYTES (a caller reading thousands of spools makes one); default new.
 */
export function readSpoolFiles(list: readonly string[], onSample: (s: Sample) => void, problems: string[] = [], buffer?: Buffer): ReadReport {
  const files: string[] = [];
  let samples = 0;
  let torn = 0;
  let corrupt = 0;
  const take = (line: string): void => {
    if (line === '' || line === TORN_MARK) return;
    if (line.endsWith(TORN_MARK)) {
      torn++;
      return;
    }
    const s = parseSampleLine(line);
    if (s === null) corrupt++;
    else {
      samples++;
      onSample(s);
    }
  };
  const chunk = buffer !== undefined && buffer.length >= CHUNK ? buffer.subarray(0, CHUNK) : Buffer.allocUnsafe(CHUNK);
  // A rotation caught between link and unlink shows one inode under two names: read it once.
  const inodes = new Set<string>();
  for (const path of list) {
    let fd: number | null = null;
    try {
      // Only our own (or root's) regular files: a link, a FIFO or a file another user planted is skipped, not read.
      fd = openRegular(path, O_RDONLY, 0o644, process.geteuid?.() ?? 0);
      const st = fstatFd(fd);
      if (st.size > MAX_READ_BYTES) {
        problems.push(`${path}: ${st.size} bytes, more than ${MAX_READ_BYTES} (rotation keeps files far smaller), skipped`);
        continue;
      }
      if (inodes.has(`${st.dev}:${st.ino}`)) continue;
      inodes.add(`${st.dev}:${st.ino}`);
      files.push(path);
      let carry = Buffer.alloc(0);
      for (let n = readFd(fd, chunk, 0, CHUNK, null); n > 0; n = readFd(fd, chunk, 0, CHUNK, null)) {
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
      problems.push(fileWhy(path, e));
    } finally {
      closeQuietly(fd);
    }
  }
  return { files, samples, torn, corrupt, problems };
}
