// Reads a generated tree as the gate does (not a test).
import { rmSync } from 'node:fs';

import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { Inventory } from '../../src/model/inventory.js';
import { buildTree, type GenNode } from '../gen/sysfs-tree.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';

export async function inventoryOf(n: GenNode): Promise<Inventory> {
  const dir = scratchDir('gdrgate-probes-', TREE_TMP);
  try {
    await buildTree(dir, n);
    return await buildInventory(new FsHost(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
