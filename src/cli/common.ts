// Shared pieces of the commands: open the root, gather the inventory, print to stdout.
import { FsHost } from '../host/fs-host.js';
import type { Host } from '../host/host.js';
import { buildInventory } from '../inventory/build.js';
import type { Inventory } from '../model/inventory.js';
import { UsageError } from '../runner/run.js';
import { promises as fsp } from 'node:fs';

/** A directory is a root (live `/` or an unpacked capture); a regular file is a snapshot (gdrgate snapshot). */
export async function openHost(root: string): Promise<Host> {
  const st = await fsp.stat(root).catch((e: NodeJS.ErrnoException) => {
    throw new UsageError(`--root ${root}: ${e.code === 'ENOENT' ? 'no such file or directory' : e.message}`);
  });
  if (st.isFile()) {
    const { openSnapshot } = await import('../snapshot/open.js');
    return openSnapshot(root).catch((e: Error) => {
      throw new UsageError(`--root ${root}: ${e.message.startsWith(root) ? e.message.slice(root.length + 2) : e.message}`);
    });
  }
  if (!st.isDirectory()) throw new UsageError(`--root ${root}: not a directory or a snapshot file`);
  return new FsHost(root);
}

/** `wrap`: a Host over the opened one (gdrgate drill's overlay), before anything is read. */
export async function gather(root: string, pidFiles?: readonly string[], wrap?: (h: Host) => Host): Promise<{ host: Host; inv: Inventory }> {
  const opened = await openHost(root);
  const host = wrap ? wrap(opened) : opened;
  return { host, inv: await buildInventory(host, pidFiles ? { slurmdPidFiles: pidFiles } : {}) };
}

export function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : text + '\n');
}
