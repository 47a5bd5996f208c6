// The per-job state on disk (real paths, not kernel paths: the Host is for node facts). Never follow a link,
// never trust a size, never leave half a file; the root-owned state directory (mode 0711: anyone may enter a
// job directory they own, nobody but root may list or create); and removal of a job directory its owner may
// have filled with anything: each directory is taken back (root-owned, 0700) before it is read, so nothing in
// it can be swapped for a link while it is emptied, and links are unlinked, never followed.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { jobDirName } from './names.js';

const C = fs.constants;

export type FileResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly kind: 'missing' | 'unsafe' | 'io'; readonly why: string };

export interface ReadRules {
  readonly max: number;
  /** Required owner uid. */
  readonly owner?: number;
  /** Refuse group/other write (0o022) or, with `private`, any group/other bit (0o077). */
  readonly mode?: 'no-other-write' | 'private';
}

export const errno = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
const msg = (e: unknown): string => (e as Error).message;
export const oct = (m: number): string => '0' + (m & 0o7777).toString(8);

/** Reads a small regular file without following a final symlink or blocking on a FIFO planted in its place. */
export function readSmall(file: string, rules: ReadRules): FileResult<Buffer> {
  let fd: number;
  try {
    fd = fs.openSync(file, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } catch (e) {
    const code = errno(e);
    if (code === 'ENOENT') return { ok: false, kind: 'missing', why: `${file}: no such file` };
    if (code === 'ELOOP') return { ok: false, kind: 'unsafe', why: `${file} is a symbolic link` };
    return { ok: false, kind: 'io', why: `${file}: ${msg(e)}` };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { ok: false, kind: 'unsafe', why: `${file} is not a regular file` };
    if (rules.owner !== undefined && st.uid !== rules.owner) return { ok: false, kind: 'unsafe', why: `${file} is owned by uid ${st.uid}, want ${rules.owner}` };
    const bad = rules.mode === 'private' ? 0o077 : rules.mode === 'no-other-write' ? 0o022 : 0;
    if (st.mode & bad) return { ok: false, kind: 'unsafe', why: `${file} has mode ${oct(st.mode)}` };
    const buf = Buffer.alloc(rules.max + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = fs.readSync(fd, buf, n, buf.length - n, null);
    if (n > rules.max) return { ok: false, kind: 'unsafe', why: `${file} is larger than ${rules.max} bytes` };
    return { ok: true, value: buf.subarray(0, n) };
  } catch (e) {
    return { ok: false, kind: 'io', why: `${file}: ${msg(e)}` };
  } finally {
    fs.closeSync(fd);
  }
}

/** Creates a new file (O_EXCL: an existing file or link there is an error, never followed) with exactly `mode`. */
export function writeNew(file: string, data: string | Buffer, mode: number): void {
  const fd = fs.openSync(file, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, mode);
  try {
    fs.fchmodSync(fd, mode); // the umask may have taken bits away
    fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
  } finally {
    fs.closeSync(fd);
  }
}

function tmpName(dir: string, name: string): string {
  return `${dir}/.${name}.${process.pid}.${randomBytes(6).toString('hex')}`;
}

/** Writes through a fresh temporary file and rename(2): readers see the old file or the new one, never half. */
export function replaceAtomically(dir: string, name: string, data: string | Buffer, mode: number): void {
  const tmp = tmpName(dir, name);
  writeNew(tmp, data, mode);
  try {
    fs.renameSync(tmp, `${dir}/${name}`);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

/** Like replaceAtomically, but link(2) never replaces: false when another writer got there first. */
export function createOnce(dir: string, name: string, data: string | Buffer, mode: number): boolean {
  const tmp = tmpName(dir, name);
  writeNew(tmp, data, mode);
  try {
    fs.linkSync(tmp, `${dir}/${name}`);
    return true;
  } catch (e) {
    if (errno(e) === 'EEXIST') return false;
    throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
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

// ---------------------------------------------------------------------------------------------- stateDir

export const STATE_DIR_MODE = 0o711;

/** Creates `stateDir` if needed and refuses one that another user could redirect or write into. */
export function ensureStateDir(stateDir: string): void {
  if (!path.isAbsolute(stateDir)) throw new Error(`stateDir ${stateDir} is not an absolute path`);
  const euid = process.geteuid?.() ?? 0;
  if (lstatOrNull(stateDir) === null) fs.mkdirSync(stateDir, { recursive: true, mode: STATE_DIR_MODE });
  const st = fs.lstatSync(stateDir);
  if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`stateDir ${stateDir} is not a directory (a link or a file is refused)`);
  if (st.uid !== euid) throw new Error(`stateDir ${stateDir} is owned by uid ${st.uid}, not ${euid}`);
  if ((st.mode & 0o7777) !== STATE_DIR_MODE) fs.chmodSync(stateDir, STATE_DIR_MODE);
  // A parent that others may write without the sticky bit lets them rename stateDir away and plant their own.
  const parent = fs.statSync(path.dirname(stateDir));
  if (parent.mode & 0o002 && !(parent.mode & 0o1000)) throw new Error(`stateDir's parent ${path.dirname(stateDir)} is world-writable without the sticky bit (${oct(parent.mode)})`);
}

// ---------------------------------------------------------------------------------------------- removal

export interface RemoveLimits {
  /** Entries in the whole tree; the job's user could create millions to stall the epilog. */
  readonly maxEntries: number;
  readonly maxDepth: number;
}

export const REMOVE_LIMITS: RemoveLimits = { maxEntries: 1024, maxDepth: 8 };

export type RemoveResult = { readonly ok: true; readonly removed: boolean } | { readonly ok: false; readonly why: string; readonly setAside: string | null };

/**
 * Locks `dir` to this process's euid with mode 0700. The caller guarantees `dir`'s parent is already locked,
 * so the name cannot be re-pointed between the lstat and the chmod.
 */
export function lockDir(dir: string): void {
  fs.lchownSync(dir, process.geteuid?.() ?? 0, process.getegid?.() ?? 0);
  const st = fs.lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} changed type while being locked`);
  fs.chmodSync(dir, 0o700);
}

function empty(dir: string, depth: number, budget: { left: number }, limits: RemoveLimits): void {
  lockDir(dir);
  for (const name of fs.readdirSync(dir)) {
    if (--budget.left < 0) throw new Error(`more than ${limits.maxEntries} entries`);
    const p = `${dir}/${name}`;
    const st = fs.lstatSync(p);
    if (st.isDirectory()) {
      if (depth >= limits.maxDepth) throw new Error(`deeper than ${limits.maxDepth} levels`);
      empty(p, depth + 1, budget, limits);
      fs.rmdirSync(p);
    } else fs.unlinkSync(p); // a file, a link (the link itself), a FIFO, a socket
  }
}

/**
 * Removes `stateDir/job-<id>`. On failure (too many entries, an I/O error) what is left has been locked
 * and is renamed out of the way (`.stale-job-<id>-<rand>`) so the next Prolog for this id can start clean.
 */
export function removeJobDir(stateDir: string, job: string, limits: RemoveLimits = REMOVE_LIMITS): RemoveResult {
  const dir = `${stateDir}/${jobDirName(job)}`;
  try {
    const st = lstatOrNull(dir);
    if (st === null) return { ok: true, removed: false };
    // Only root can create entries in stateDir: a non-directory here is stale or an admin's mistake; drop the name.
    if (!st.isDirectory()) {
      fs.unlinkSync(dir);
      return { ok: true, removed: true };
    }
    empty(dir, 0, { left: limits.maxEntries }, limits);
    fs.rmdirSync(dir);
    return { ok: true, removed: true };
  } catch (e) {
    const why = `${dir}: ${(e as Error).message}`;
    const aside = `${stateDir}/.stale-${jobDirName(job)}-${randomBytes(4).toString('hex')}`;
    try {
      fs.renameSync(dir, aside);
      return { ok: false, why, setAside: aside };
    } catch (e2) {
      return { ok: false, why: `${why}; cannot set it aside: ${errno(e2)}`, setAside: null };
    }
  }
}
