// The per-job state on disk (real paths, not kernel paths: the Host is for node facts). Never follow a link,
// never trust a size, never leave half a file; the root-owned state directory (mode 0711: anyone may enter a
// job directory they own, nobody but root may list or create); and removal of a job directory its owner may
// have filled with anything: each directory is taken back (root-owned, 0700) before it is read, so nothing in
// it can be swapped for a link while it is emptied, and links are unlinked, never followed.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { listNames, makeDirs, removeDir, someNames } from '../host/dirs.js';
import { chmod, lstat, rename, stat, unlink, type Stats } from '../host/entries.js';
import { closeFd, fchmodFd, fchownFd, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, openFd } from '../host/fd.js';
import { assertSafeAbove, errno, lstatOrNull, writeAtomic } from '../host/files.js';
import { HeldDir, type Look } from '../host/held-dir.js';
import { mountAt, mountsOrWhy } from '../host/mounts.js';
import { untrustedReason } from '../host/trust.js';
import { jobDirName, taskFifoName } from './names.js';

/** The per-job files are written the gate's one way (src/host/files.ts); the agent's pid file too. */
export function replaceAtomically(dir: string, name: string, data: string | Buffer, mode: number): void {
  writeAtomic(`${dir}/${name}`, data, { mode });
}

// ---------------------------------------------------------------------------------------------- stateDir

export const STATE_DIR_MODE = 0o711;

/** Creates `stateDir` if needed and refuses one that another user could redirect or write into. */
export function ensureStateDir(stateDir: string): void {
  if (!path.isAbsolute(stateDir)) throw new Error(`stateDir ${stateDir} is not an absolute path`);
  const euid = process.geteuid?.() ?? 0;
  if (lstatOrNull(stateDir) === null) {
    assertSafeAbove(stateDir); // nothing made where another user could re-point the path
    makeDirs(stateDir, STATE_DIR_MODE);
  }
  const st = lstat(stateDir);
  if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`stateDir ${stateDir} is not a directory (a link or a file is refused)`);
  if (st.uid !== euid) throw new Error(`stateDir ${stateDir} is owned by uid ${st.uid}, not ${euid}`);
  // Judged as found, before it is made ours: one anyone may write in (a sticky /tmp named by mistake) is everyone's
  // place, never closed to them by a chmod (the review of a3c23a3: /tmp left 0711, node-wide). A group-writable one
  // (made by hand under umask 002) is tightened below, as before.
  if (st.mode & 0o1002) throw new Error(`stateDir ${stateDir} is ${st.mode & 0o002 ? 'writable by anyone' : 'a sticky directory'} (mode ${(st.mode & 0o7777).toString(8)}): a place others share, refused and not changed; name a directory of its own (default /run/gdrgate)`);
  if ((st.mode & 0o7777) !== STATE_DIR_MODE) chmod(stateDir, STATE_DIR_MODE);
  // A directory above it that others may change lets them rename stateDir away and plant their own, or re-point the
  // path at a directory of their choosing (where root would then make its key and the jobs' directories).
  const why = euid === 0 ? untrustedReason(stateDir, euid) : null;
  if (why !== null) throw new Error(`stateDir ${stateDir} lies where another user could redirect it: ${why}`);
  // Not root (by hand, tests): its parent at least. Followed: a link's own mode is 777 on Linux and says nothing (a
  // stateDir named through one, as /var/run/gdrgate is through /var/run, was refused as world-writable).
  const parent = stat(path.dirname(stateDir));
  if (parent.mode & 0o002 && !(parent.mode & 0o1000)) throw new Error(`stateDir's parent ${path.dirname(stateDir)} is world-writable without the sticky bit (${(parent.mode & 0o7777).toString(8)})`);
}

// ---------------------------------------------------------------------------------------------- removal

export interface RemoveLimits {
  /** Entries in the whole tree; the job's user could create millions to stall the epilog. */
  readonly maxEntries: number;
  readonly maxDepth: number;
}

export const REMOVE_LIMITS: RemoveLimits = { maxEntries: 1024, maxDepth: 8 };

export type RemoveResult = { readonly ok: true; readonly removed: boolean } | { readonly ok: false; readonly why: string; readonly setAside: string | null };

function takeBack(fd: number): void {
  try {
    fchownFd(fd, process.geteuid?.() ?? 0, process.getegid?.() ?? 0);
    fchmodFd(fd, 0o700);
  } finally {
    closeFd(fd);
  }
}

/** Locks `dir` (its parent already locked: the name stays) to this euid, 0700, through a descriptor opened as a directory,
 * never a link: a name swapped for a hard link to a file (its owner, mode) or a symbolic link is refused, nothing changed. */
export function lockDir(dir: string): void {
  let fd: number;
  try {
    fd = openFd(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK);
  } catch (e) {
    if (errno(e) === 'ENOTDIR' || errno(e) === 'ELOOP') throw new Error(`${dir} changed type while being locked`, { cause: e });
    throw e;
  }
  takeBack(fd);
}

/** lstat of `stateDir/name` as held (host/held-dir.ts): 'mount', never asked, when its user mounted on it (any time after
 * the table was read); null when it, or stateDir, is not there. Throws what the kernel said otherwise. */
export function lookHeld(stateDir: string, name: string): Look<Stats> {
  const top = HeldDir.ifAny(stateDir);
  if (top === null) return null;
  if (typeof top === 'string') throw new Error(top);
  try {
    return top.lstat(name);
  } finally {
    top.close();
  }
}

/** lockDir of `name` in `d`, looked at and opened as held: its lstat before the lock; 'mount', null or a non-directory's lstat, nothing locked. */
function lockIn(d: HeldDir, name: string): Look<Stats> {
  const st = d.lstat(name);
  if (st === null || st === 'mount' || !st.isDirectory()) return st;
  const fd = d.openAs(name, O_RDONLY | O_DIRECTORY, (now) => (now.isDirectory() ? null : 'changed type while being locked'));
  if (fd === null || fd === 'mount') return fd;
  if (typeof fd === 'string') throw new Error(`${d.path}/${name} ${fd}`);
  takeBack(fd);
  return st;
}

/** lockIn of `stateDir/name`: 'mount' (nothing locked) when something is mounted on it, null when it is not there. */
export function lockHeld(stateDir: string, name: string): Look<Stats> {
  const top = HeldDir.ifAny(stateDir);
  if (top === null) return null;
  if (typeof top === 'string') throw new Error(top);
  try {
    return lockIn(top, name);
  } finally {
    top.close();
  }
}

/**
 * Locks every directory from `stateDir`'s entry down to `target`'s parent, top down, as held (its user's until then, who
 * may mount on it after the table named `target`: told, never entered); not `target` (a mount point). maxDepth at most.
 */
export function lockPathTo(stateDir: string, target: string, maxDepth = REMOVE_LIMITS.maxDepth): void {
  if (!target.startsWith(`${stateDir}/`)) throw new Error(`${target} is not below ${stateDir}`);
  const parts = target.slice(stateDir.length + 1).split('/');
  if (parts.length - 1 > maxDepth) throw new Error(`${target} lies ${parts.length - 1} directories deep, beyond ${maxDepth}`);
  const top = HeldDir.of(stateDir);
  if (typeof top === 'string') throw new Error(top);
  const held = [top];
  try {
    for (const c of parts.slice(0, -1)) {
      const d = held.at(-1)!;
      const [st, p] = [lockIn(d, c), `${d.path}/${c}`];
      const next = st === 'mount' || st === null || !st.isDirectory() ? st : d.dir(c);
      if (next === 'mount') throw new Error(`${p} is a mount: not entered`);
      if (next === null) throw new Error(`${p}: no such directory (ENOENT)`);
      if (!(next instanceof HeldDir)) throw new Error(`${p} changed type while being locked`);
      held.push(next);
    }
  } finally {
    held.forEach((h) => h.close());
  }
}

/** Names read from a directory at a time: a directory of millions of entries is never listed whole into memory. */
const BATCH = 256;

/**
 * Empties `dir` (locked first) within `budget` entries. A directory deeper than maxDepth is handed to `deep` when
 * given (reclaim hoists it out to be removed on its own), else it is an error. Batches are re-read from the start:
 * what was removed is gone, so nothing is skipped by removing while reading.
 */
function empty(dir: string, depth: number, budget: { left: number }, limits: RemoveLimits, deep?: (p: string) => void): void {
  lockDir(dir);
  for (let names = someNames(dir, BATCH); names.length > 0; names = someNames(dir, BATCH)) {
    for (const name of names) {
      if (--budget.left < 0) throw new Error(`more than ${limits.maxEntries} entries`);
      const p = `${dir}/${name}`;
      const st = lstat(p);
      if (st.isDirectory()) {
        if (depth >= limits.maxDepth) {
          if (deep === undefined) throw new Error(`deeper than ${limits.maxDepth} levels`);
          deep(p);
          continue;
        }
        empty(p, depth + 1, budget, limits, deep);
        removeDir(p);
      } else unlink(p); // a file, a link (the link itself), a FIFO, a socket
    }
  }
}

/** Where removeJobDir learns the mounts below stateDir. */
export interface RemoveMounts {
  /** The table read before the directory was looked at (default: read then). */
  readonly mounts?: readonly string[];
  /** The table the caller read after it took the directory back itself (lockDir): not read again. */
  readonly locked?: readonly string[];
  /** The job's TaskProlog FIFO left in place. */
  readonly keepFifo?: boolean;
}

/**
 * Removes `stateDir/job-<id>`. On failure (too many entries, an I/O error) what is left has been locked
 * and is renamed out of the way (`.stale-job-<id>-<rand>`) so the next Prolog for this id can start clean.
 */
export function removeJobDir(stateDir: string, job: string, limits: RemoveLimits = REMOVE_LIMITS, o: RemoveMounts = {}): RemoveResult {
  const given = o.locked ?? o.mounts;
  const read = given !== undefined ? { mounts: given } : mountsOrWhy(stateDir);
  if ('why' in read) return { ok: false, why: read.why, setAside: null };
  const mounts = read.mounts;
  const keepFifo = o.keepFifo ?? false;
  const dir = `${stateDir}/${jobDirName(job)}`;
  // The job's TaskProlog FIFO (src/agent/task-fifos.ts) goes with it: a name in stateDir, which only root changes.
  // (Kept by the record written after the agent's answer: the FIFO then is this run's, handed over with the answer.)
  try {
    if (!keepFifo) unlink(`${stateDir}/${taskFifoName(job)}`);
  } catch {
    /* none */
  }
  // A mount on or in it (its user's FUSE file system) is never entered: root's lstat there waits on the user's daemon.
  const mount = mountAt(mounts, dir);
  if (mount !== null) return { ok: false, why: `${mount} is a mount: not entered`, setAside: null };
  // Taken back as held (a mount made on it since `mounts` was read is told, not entered) before anything in it is looked
  // at; one made in it before that is in the table read now (fusermount looks its mount point up through it). Neither
  // set aside (a rename carries a mount along, into what reclaimStale walks) nor when not taken back (kept its user's).
  let st: Look<Stats>;
  try {
    st = lockHeld(stateDir, jobDirName(job));
  } catch (e) {
    return { ok: false, why: `${dir}: ${(e as Error).message}`, setAside: null };
  }
  try {
    if (st === null) return { ok: true, removed: false };
    if (st === 'mount') return { ok: false, why: `${dir} is a mount: not entered`, setAside: null };
    // Only root can create entries in stateDir: a non-directory here is stale or an admin's mistake; drop the name.
    if (!st.isDirectory()) {
      unlink(dir);
      return { ok: true, removed: true };
    }
    const now = o.locked ? { mounts: o.locked } : mountsOrWhy(stateDir);
    // Unread: not entered, not set aside (a rename would carry a mount in it along).
    if ('why' in now) return { ok: false, why: now.why, setAside: null };
    const inside = mountAt(now.mounts, dir);
    if (inside !== null) return { ok: false, why: `${inside} is a mount: not entered`, setAside: null };
    empty(dir, 0, { left: limits.maxEntries }, limits);
    removeDir(dir);
    return { ok: true, removed: true };
  } catch (e) {
    const why = `${dir}: ${(e as Error).message}`;
    const aside = `${stateDir}/.stale-${jobDirName(job)}-${randomBytes(4).toString('hex')}`;
    try {
      rename(dir, aside);
      return { ok: false, why, setAside: aside };
    } catch (e2) {
      return { ok: false, why: `${why}; cannot set it aside: ${errno(e2)}`, setAside: null };
    }
  }
}

// ---------------------------------------------------------------------------------------------- reclaim

/** Entries removed from set-aside directories per epilog: ~10 ms of unlinks on tmpfs; later epilogs finish the work. */
export const RECLAIM_BUDGET = 4096;
const STALE_PREFIX = '.stale-';

export interface Reclaimed {
  /** Set-aside directories removed whole by this call. */
  readonly removed: number;
  /** Set-aside directories still there (budget spent, or an error): the next epilog goes on. */
  readonly left: number;
  readonly errors: readonly string[];
}

/**
 * Removes what removeJobDir set aside (`.stale-*`), at most `budget` entries per call, so a job that filled its
 * directory with millions of files costs each epilog a bounded time and the memory (`/run` is tmpfs) comes back
 * over the next few. Already root-owned and 0700 (locked by the failed removal): the user can add nothing. A
 * directory nested deeper than the removal's depth limit is renamed up into stateDir as one more `.stale-` entry.
 */
export function reclaimStale(stateDir: string, budget = RECLAIM_BUDGET): Reclaimed {
  const errors: string[] = [];
  let removed = 0;
  let names: string[];
  try {
    names = listNames(stateDir).filter((n) => n.startsWith(STALE_PREFIX)); // only root creates names here
  } catch (e) {
    return { removed, left: 0, errors: errno(e) === 'ENOENT' ? [] : [`${stateDir}: ${errno(e)}`] };
  }
  const left = { left: budget };
  const limits: RemoveLimits = { maxEntries: budget, maxDepth: REMOVE_LIMITS.maxDepth };
  const hoist = (p: string): void => rename(p, `${stateDir}/${STALE_PREFIX}deep-${randomBytes(4).toString('hex')}`);
  for (const name of names) {
    if (left.left <= 0) break;
    const p = `${stateDir}/${name}`;
    try {
      const st = lstat(p);
      if (st.isDirectory()) {
        empty(p, 0, left, limits, hoist);
        removeDir(p);
      } else unlink(p);
      removed++;
    } catch (e) {
      if (left.left >= 0) errors.push(`${p}: ${(e as Error).message}`);
    }
  }
  let after = 0;
  try {
    after = listNames(stateDir).filter((n) => n.startsWith(STALE_PREFIX)).length;
  } catch (e) {
    errors.push(`${stateDir}: ${errno(e)}`);
  }
  return { removed, left: after, errors };
}
