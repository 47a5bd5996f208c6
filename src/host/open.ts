// Opens a root for reading: a directory (a live `/` or an unpacked capture) or a snapshot file (gdrgate snapshot).
import { statSync, type Stats } from 'node:fs';
import { RootError } from '../errors.js';
import { FsHost } from './fs-host.js';
import type { Host } from './host.js';

export async function openHost(root: string): Promise<Host> {
  let st: Stats;
  try {
    st = statSync(root); // synchronous: an async stat would start libuv's thread pool for this one call
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new RootError(root, err.code === 'ENOENT' ? 'no such file or directory' : err.message);
  }
  if (st.isFile()) {
    const { openSnapshot, SnapshotError } = await import('../snapshot/open.js');
    // A file that is not a snapshot, or cannot be read, is the user's to fix (exit 2); anything else is a defect (exit 3).
    return openSnapshot(root).catch((e: unknown) => {
      if (!(e instanceof SnapshotError) && (e as NodeJS.ErrnoException).code === undefined) throw e;
      const m = (e as Error).message;
      throw new RootError(root, m.startsWith(root) ? m.slice(root.length + 2) : m);
    });
  }
  if (!st.isDirectory()) throw new RootError(root, 'not a directory or a snapshot file');
  return new FsHost(root);
}
