// One fleet node's snapshot read through the one engine (readNode), in process or in a read-pool worker: the
// inventory, or why it could not be read (an unreadable snapshot is a missing node). Anything else is a fault.
// A worker answers with the inventory split (digest.ts): the node's own fields and its key, the shared part's
// bytes only the first time that worker meets the key.
import { nul } from '../model/fact.js';
import { readNode } from '../engine/evaluate.js';
import { ConfigError, UsageError } from '../errors.js';
import { pciListUnknown } from '../inventory/pci-known.js';
import type { Inventory } from '../model/inventory.js';
import type { NodeOwn } from './digest.js';

export type ReadOne = { readonly inv: Inventory } | { readonly why: string };

export interface WorkerJob {
  readonly i: number;
  readonly node: string;
  readonly file: string;
}

/** A node read by a worker: its key and own fields; `shared` (structured-clone bytes) the first time the worker sends the key. */
export interface WorkerRead {
  readonly key: string;
  readonly own: NodeOwn;
  readonly shared?: Uint8Array;
}

export type WorkerAnswer = { readonly i: number } & (WorkerRead | { readonly why: string } | { readonly fatal: string });

const why = (e: unknown): string | null => (e instanceof UsageError || e instanceof ConfigError || (e as NodeJS.ErrnoException).code !== undefined ? (e as Error).message : null);

/**
 * Why a snapshot read without error still cannot be judged as `node`: taken on another host (a copy saved under
 * this node's name would be judged as this node), or its PCI device list is unknown (not recorded, unreadable):
 * every device fact would read as "no device". Null when it can.
 */
export function notThisNode(node: string, inv: Inventory): string | null {
  const pci = pciListUnknown(inv);
  if (pci !== null) return `the snapshot's PCI device list is unknown (${pci})`;
  const host = nul(inv.hostname);
  if (host === null) return 'the snapshot records no host name: whose it is cannot be told';
  const short = host.split('.')[0]!;
  if (short.toLowerCase() !== node.toLowerCase()) return `the snapshot was taken on ${JSON.stringify(host.slice(0, 64))}, not on ${node}: not judged as ${node}`;
  return null;
}

export async function readSnapshotNode(node: string, file: string): Promise<ReadOne> {
  try {
    const { inv } = await readNode({ root: file, baseline: null, node, trust: [] });
    const bad = notThisNode(node, inv);
    if (bad !== null) return { why: bad };
    return { inv };
  } catch (e) {
    const w = why(e);
    if (w === null) throw e;
    return { why: w };
  }
}
