// Whether a directory the gate reads its own records from is root's alone, as a value: a record another user could
// remove, or put an older one of root's back, in a directory they can write is not what the gate wrote.
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
