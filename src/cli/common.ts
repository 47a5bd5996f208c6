// Shared pieces of the commands: open the root, gather the inventory, print to stdout.
import { FsHost } from '../host/fs-host.js';
import type { Host } from '../host/host.js';
import { buildInventory } from '../inventory/build.js';
import type { Inventory } from '../model/inventory.js';
import { UsageError } from '../runner/run.js';
import { statSync, type Stats } from 'node:fs';

/** A directory is a root (live `/` or an unpacked capture); a regular file is a snapshot (gdrgate snapshot). */
export async function openHost(root: string): Promise<Host> {
  let st: Stats;
  try {
    st = statSync(root); // synchronous: an async stat would start libuv's thread pool for this one call
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new UsageError(`--root ${root}: ${err.code === 'ENOENT' ? 'no such file or directory' : err.message}`);
  }
  if (st.isFile()) {
    const { openSnapshot } = await import('../snapshot/open.js');
    return openSnapshot(root).catch((e: Error) => {
      throw new UsageError(`--root ${root}: ${e.message.startsWith(root) ? e.message.slice(root.length + 2) : e.message}`);
    });
  }
  if (!st.isDirectory()) throw new UsageError(`--root ${root}: not a directory or a snapshot file`);
  return new FsHost(root);
}

/** `wrap`: a Host over the opened one (gdrgate drill's overlay), before anything is read. `selfPid`: see BuildOptions. */
export async function gather(root: string, pidFiles?: readonly string[], wrap?: (h: Host) => Host, selfPid?: number): Promise<{ host: Host; inv: Inventory }> {
  const opened = await openHost(root);
  const host = wrap ? wrap(opened) : opened;
  return { host, inv: await buildInventory(host, { ...(pidFiles ? { slurmdPidFiles: pidFiles } : {}), ...(selfPid !== undefined ? { selfPid } : {}) }) };
}

export { out } from '../host/stdout.js';
