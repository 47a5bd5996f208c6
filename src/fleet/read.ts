// Every node of a fleet directory read through the one engine (readNode), a few at a time, with progress: nodes read
// of total and the one pending longest. A snapshot that cannot be read is a missing node, listed, never fatal.
import { readNode } from '../engine/evaluate.js';
import { ConfigError, UsageError } from '../errors.js';
import type { Inventory } from '../model/inventory.js';
import type { NodeMissing } from './types.js';

export interface FleetProgress {
  readonly done: number;
  readonly total: number;
  /** The pending node read longest, and for how long (ms); null when none is pending. */
  readonly slowest: { readonly node: string; readonly ms: number } | null;
}

export interface ReadNode {
  readonly node: string;
  readonly file: string;
  readonly inv: Inventory;
}

export interface ReadOptions {
  /** Snapshots opened at once (default 4: the reads are mostly CPU, a few overlap the file reads). */
  readonly concurrency?: number;
  readonly onProgress?: (p: FleetProgress) => void;
  readonly now?: () => number;
}

const why = (e: unknown): string | null => (e instanceof UsageError || e instanceof ConfigError || (e as NodeJS.ErrnoException).code !== undefined ? (e as Error).message : null);

export async function readFleet(snapshots: readonly { readonly node: string; readonly file: string }[], o: ReadOptions = {}): Promise<{ read: ReadNode[]; missing: NodeMissing[] }> {
  const now = o.now ?? Date.now;
  const read: (ReadNode | null)[] = new Array<ReadNode | null>(snapshots.length).fill(null);
  const missing: NodeMissing[] = [];
  const pending = new Map<string, number>();
  let done = 0;
  const tell = (): void => {
    if (!o.onProgress) return;
    let slowest: FleetProgress['slowest'] = null;
    const t = now();
    // Insertion order is start order: the first pending entry is the one waiting longest.
    for (const [node, since] of pending) {
      slowest = { node, ms: t - since };
      break;
    }
    o.onProgress({ done, total: snapshots.length, slowest });
  };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < snapshots.length) {
      const i = next++;
      const s = snapshots[i]!;
      pending.set(s.node, now());
      try {
        const { inv } = await readNode({ root: s.file, baseline: null, node: s.node, trust: [] });
        read[i] = { node: s.node, file: s.file, inv };
      } catch (e) {
        const w = why(e);
        if (w === null) throw e;
        missing.push({ node: s.node, why: w });
      } finally {
        pending.delete(s.node);
        done++;
        tell();
      }
    }
  };
  tell();
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? 4, snapshots.length)) }, worker));
  return { read: read.filter((r): r is ReadNode => r !== null), missing };
}
