// The one way the gate opens the files it keeps itself (state, spool, stamps, locks, textfile, drill, snapshot):
// never through a final symbolic link (O_NOFOLLOW), never blocking on a FIFO planted in their place (O_NONBLOCK),
// only regular files (checked with fstat on the open descriptor, so nothing can be swapped in between), sizes
// capped on read, new files created exclusively (O_EXCL) under unpredictable temporary names, and never in a
// directory that another user can write (they could plant every of the above, or rename our files away).
import fs from 'node:fs';
import path from 'node:path';
import { makeDirs } from './dirs.js';
import { absolute, untrustedReason } from './trust.js';

const C = fs.constants;
const NOFOLLOW = C.O_NOFOLLOW | C.O_NONBLOCK;

export type FileResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly kind: 'missing' | 'unsafe' | 'io'; readonly why: string };

export interface ReadRules {
  readonly max: number;
  /** Required owner uid. */
  readonly owner?: number;
  /** Refuse group/other write (0o022) or, with `private`, every group/other bit (0o077). */
  readonly mode?: 'no-other-write' | 'private';
  /** Read the newest `max` bytes of a longer file instead of refusing it (an append-only log). */
  readonly tail?: boolean;
}

export const errno = (e: unknown): string => (e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : 'EUNKNOWN');
const msg = (e: unknown): string => (e as Error).message;
export const oct = (m: number): string => '0' + (m & 0o7777).toString(8);
const euid = (): number => process.geteuid?.() ?? 0;

/** A file or directory the gate refuses to use: planted, linked, or writable by someone else. */
export class UnsafeFileError extends Error {
  readonly code = 'EUNSAFE';
}

/**
 * Opens `file` with `flags` plus O_NOFOLLOW|O_NONBLOCK and returns the descriptor only when it is a regular file
 * (owned by `owner` when given); otherwise closes it and throws UnsafeFileError. A FIFO opened for writing with no
 * reader fails ENXIO instead of blocking in open(2); a link fails ELOOP: both come back as UnsafeFileError.
 * `chars`: a character device is accepted too (an admin's logFile of /dev/null); only root can create one.
 */
export function openRegular(file: string, flags: number, mode = 0o644, owner?: number, chars = false): number {
  let fd: number;
  try {
    fd = fs.openSync(file, flags | NOFOLLOW, mode);
  } catch (e) {
    if (errno(e) === 'ELOOP') throw new UnsafeFileError(`${file} is a symbolic link`, { cause: e });
    if (errno(e) === 'ENXIO') throw new UnsafeFileError(`${file} is not a regular file (a FIFO or socket)`, { cause: e });
    throw e;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() && !(chars && st.isCharacterDevice())) throw new UnsafeFileError(`${file} is not a regular file`);
    if (owner !== undefined && st.uid !== owner && st.uid !== 0) throw new UnsafeFileError(`${file} is owned by uid ${st.uid}, not ${owner}`);
    return fd;
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/**
 * Refuses a directory another user could write into or re-point: not a directory (a link to one included), owned by
 * someone else than this euid or root, group/other writable without the sticky bit, or (for root, `above`) on a path
 * another user can change (host/trust.ts). In a sticky directory (/tmp) others can plant names but not rename or
 * remove ours, and every open here is O_EXCL or O_NOFOLLOW.
 */
export function assertSafeDir(dir: string, above = true): void {
  const st = fs.lstatSync(dir); // absent: ENOENT as is, the caller's "no such directory"
  if (!st.isDirectory()) throw new UnsafeFileError(`${dir} is not a directory${st.isSymbolicLink() ? ' (a symbolic link is refused)' : ''}`);
  if (st.uid !== euid() && st.uid !== 0) throw new UnsafeFileError(`${dir} is owned by uid ${st.uid}: another user could plant files there`);
  if (st.mode & 0o022 && !(st.mode & 0o1000)) throw new UnsafeFileError(`${dir} is writable by ${st.mode & 0o002 ? 'anyone' : 'its group'} (mode ${oct(st.mode)})`);
  // Above it too, for root: a directory on its path that another user can write lets them re-point it (a job user's
  // TaskProlog writes in its own job's directory, in a user namespace root's directories show as the overflow uid).
  if (!above || euid() !== 0) return;
  const why = untrustedReason(dir, euid());
  if (why !== null) throw new UnsafeFileError(`${dir} lies where another user could redirect it: ${why}`);
}

/** For root: refuses `dir` before anything is made there when its nearest ancestor lies where another could redirect it. */
export function assertSafeAbove(dir: string): void {
  if (euid() !== 0) return; // as assertSafeDir; not normalised below: a `..` is the walk's
  let d = path.dirname(absolute(dir));
  while (d !== '/' && lstatOrNull(d) === null) d = path.dirname(d);
  const why = untrustedReason(d, euid());
  if (why !== null) throw new UnsafeFileError(`${dir} would lie where another user could redirect it: ${why}`);
}

/** Creates `dir` (and its parents) if needed, then refuses it as assertSafeDir does. */
export function ensureSafeDir(dir: string, mode = 0o755): void {
  if (lstatOrNull(dir) === null) {
    assertSafeAbove(dir); // judged before anything is made; one walk (assertSafeDir's) where it is there already
    makeDirs(dir, mode);
  }
  assertSafeDir(dir);
}

/** Reads a small regular file without following a final symlink or blocking on a FIFO planted in its place. */
export function readSmall(file: string, rules: ReadRules): FileResult<Buffer> {
  let fd: number;
  try {
    fd = openRegular(file, C.O_RDONLY);
  } catch (e) {
    if (errno(e) === 'ENOENT') return { ok: false, kind: 'missing', why: `${file}: no such file (ENOENT)` };
    return { ok: false, kind: e instanceof UnsafeFileError ? 'unsafe' : 'io', why: e instanceof UnsafeFileError ? msg(e) : `${file}: ${msg(e)}` };
  }
  return readOpened(fd, file, rules);
}

/** readSmall's reading of `fd`, a regular file opened for reading (as `file`), which it closes. */
export function readOpened(fd: number, file: string, rules: ReadRules): FileResult<Buffer> {
  try {
    const st = fs.fstatSync(fd);
    if (rules.owner !== undefined && st.uid !== rules.owner) return { ok: false, kind: 'unsafe', why: `${file} is owned by uid ${st.uid}, not ${rules.owner}` };
    const bad = rules.mode === 'private' ? 0o077 : rules.mode === 'no-other-write' ? 0o022 : 0;
    if (st.mode & bad) return { ok: false, kind: 'unsafe', why: `${file} is ${bad === 0o077 ? 'open to' : 'writable by'} others (mode ${oct(st.mode)})` };
    // A tail read starts where the newest `max` bytes begin; the size is only a hint (the file may grow meanwhile).
    let pos: number | null = rules.tail && st.size > rules.max ? st.size - rules.max : null;
    const buf = Buffer.alloc(rules.max + (rules.tail ? 0 : 1));
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) {
      r = fs.readSync(fd, buf, n, buf.length - n, pos);
      if (pos !== null) pos += r;
    }
    if (n > rules.max) return { ok: false, kind: 'unsafe', why: `${file} is larger than ${rules.max} bytes` };
    return { ok: true, value: buf.subarray(0, n) };
  } catch (e) {
    return { ok: false, kind: 'io', why: `${file}: ${msg(e)}` };
  } finally {
    fs.closeSync(fd);
  }
}

function writeAll(fd: number, data: string | Uint8Array): void {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  for (let n = 0; n < buf.length; ) n += fs.writeSync(fd, buf, n, buf.length - n);
}

/** Creates a new file (O_EXCL: an existing file or link there is an error, never followed) with exactly `mode`. */
export function writeNew(file: string, data: string | Uint8Array, mode: number, sync = false): void {
  const fd = fs.openSync(file, C.O_WRONLY | C.O_CREAT | C.O_EXCL | NOFOLLOW, mode);
  try {
    fs.fchmodSync(fd, mode); // the umask may have taken bits away
    writeAll(fd, data);
    if (sync) fs.fsyncSync(fd);
  } catch (e) {
    // Made by this call (O_EXCL) and not written whole (ENOSPC on a full /run): removed, so that an empty lock or
    // state file is never left to read as one that was written.
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
    throw e;
  }
  fs.closeSync(fd);
}

/** `.name.<pid>.<12 random hex>`: nobody can guess it to plant a link or FIFO there first (and O_EXCL refuses one). */
function tmpName(dir: string, name: string): string {
  // Web Crypto's global, loaded on first use: the log file opens through this module in every prolog, which must
  // not pay for node:crypto at start-up.
  const rand = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(6))).toString('hex');
  return path.join(dir, `.${name}.${process.pid}.${rand}`);
}

export interface WriteOptions {
  readonly mode?: number;
  /** fsync before the rename: the file survives a crash whole (a snapshot, a drill file), at some milliseconds' cost. */
  readonly sync?: boolean;
  /** false: its own directory judged alone (node_exporter's, under its user's /var/lib/prometheus on Debian). */
  readonly above?: boolean;
}

/**
 * Writes through a fresh temporary file and rename(2): readers (node_exporter, the next epilog, a prolog) see the
 * old file or the new one, never half. rename(2) replaces a link planted at `file` and never writes through it.
 */
export function writeAtomic(file: string, data: string | Uint8Array, o: WriteOptions = {}): void {
  const dir = path.dirname(file);
  assertSafeDir(dir, o.above ?? true);
  const tmp = tmpName(dir, path.basename(file));
  try {
    writeNew(tmp, data, o.mode ?? 0o644, o.sync ?? false);
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * writeAtomic under several names of one directory, as one file: written once to a fresh temporary name, then each
 * further name made that same file by link(2) to another fresh temporary name and rename(2) onto it, the first
 * name last. Every name shows the old file or the whole new one, never half; rename(2) replaces a link planted at a
 * name and never writes through it; link(2) does not follow the temporary name (ours, just created O_EXCL). One
 * directory check, one open, fchmod and write for all of them.
 */
export function writeAtomicNames(dir: string, names: readonly string[], data: string | Uint8Array, o: WriteOptions = {}): void {
  const [first, ...more] = names;
  if (first === undefined) return;
  assertSafeDir(dir);
  const tmp = tmpName(dir, first);
  let alias: string | null = null;
  try {
    writeNew(tmp, data, o.mode ?? 0o644, o.sync ?? false);
    for (const name of more) {
      alias = tmpName(dir, name);
      fs.linkSync(tmp, alias);
      fs.renameSync(alias, path.join(dir, name));
      alias = null;
    }
    fs.renameSync(tmp, path.join(dir, first));
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    if (alias !== null) fs.rmSync(alias, { force: true });
    throw e;
  }
}

/** Like writeAtomic, but link(2) never replaces: false when another writer got there first. */
export function createOnce(dir: string, name: string, data: string | Uint8Array, mode: number): boolean {
  const tmp = tmpName(dir, name);
  writeNew(tmp, data, mode);
  try {
    fs.linkSync(tmp, path.join(dir, name));
    return true;
  } catch (e) {
    if (errno(e) === 'EEXIST') return false;
    throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/**
 * An O_APPEND descriptor on `file` (created with `mode`), in a directory no other user can write, on a regular
 * file of ours or root's. `read`: also readable (the sample spool looks at its last byte). The caller closes it.
 */
export function openAppend(file: string, mode = 0o644, read = false): number {
  assertSafeDir(path.dirname(file));
  return openRegular(file, (read ? C.O_RDWR : C.O_WRONLY) | C.O_APPEND | C.O_CREAT, mode, euid());
}

/** Appends `text` as one write(2) (whole lines stay whole on a local filesystem) through openAppend. */
export function appendText(file: string, text: string, mode = 0o644): void {
  const fd = openAppend(file, mode);
  try {
    writeAll(fd, text);
  } finally {
    fs.closeSync(fd);
  }
}

/** lstat that says "absent" instead of throwing ENOENT. */
export function lstatOrNull(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch (e) {
    if (errno(e) === 'ENOENT' || errno(e) === 'ENOTDIR') return null;
    throw e;
  }
}

/** Runs f and ignores a throw: cleanup whose failure changes nothing (close after a write, best-effort repairs). */
export function quietly(f: () => void): void {
  try {
    f();
  } catch {
    // Nothing to add to the result already decided.
  }
}
