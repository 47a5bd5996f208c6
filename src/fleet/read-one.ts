// One fleet node's snapshot read through the one engine (readNode), in process or in a read-pool worker: the
// inventory, or why it could not be read (an unreadable snapshot is a missing node). Anything else is a fault.
import { readNode } from '../engine/evaluate.js';
import { ConfigError, UsageError } from '../errors.js';
import type { Inventory } from '../model/inventory.js';

export type ReadOne = { readonly inv: Inventory } | { readonly why: string };

export interface WorkerJob {
  readonly i: number;
  readonly node: string;
  readonly file: string;
}

export type WorkerAnswer = { readonly i: number } & (ReadOne | { readonly fatal: string });

const why = (e: unknown): string | null => (e instanceof UsageError || e instanceof ConfigError || (e as NodeJS.ErrnoException).code !== undefined ? (e as Error).message : null);

export async function readSnapshotNode(node: string, file: string): Promise<ReadOne> {
  try {
    const { inv } = await readNode({ root: file, baseline: null, node, trust: [] });
    return { inv };
  } catch (e) {
    const w = why(e);
    if (w === null) throw e;
    return { why: w };
  }
}
