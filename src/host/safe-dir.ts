// Directories as values: whether one the gate reads its own records from is root's alone (a record another user could
// remove, or put an older one of root's back, in a directory they can write is not what the gate wrote), and why this
// process cannot make a file in one, and how much room is left in one.
import fs from 'node:fs';
import { assertSafeDir, errno } from './files.js';

/** Why `dir` is not a directory only root (or this user) can change, as assertSafeDir judges; 'missing' where there is none; null where it is. */
export function unsafeDirWhy(dir: string): string | null {
  try {
    assertSafeDir(dir);
    return null;
  } catch (e) {
    return errno(e) === 'ENOENT' ? 'missing' : (e as Error).message;
  }
}

/** Why this process cannot make a file in `dir` (access(2) W_OK|X_OK: EACCES, EROFS, ENOENT…), or null where it can. */
export function cannotWriteIn(dir: string): string | null {
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
    return null;
  } catch (e) {
    return `${dir}: ${errno(e)} (this user cannot make a file there)`;
  }
}

/** The bytes this process may still write on the file system holding `dir` (statfs(2) f_bavail × f_bsize); null where it cannot be told. */
export function freeBytes(dir: string): number | null {
  try {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}
