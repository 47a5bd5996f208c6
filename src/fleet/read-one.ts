// One fleet node read for the judge, in process or in a read-pool worker: its compare view (src/compare/view.ts)
// from the summary the node wrote beside its snapshot when that summary holds (summary.ts), else from the snapshot
// itself through the one engine (readNode); or why the node cannot be judged (an unreadable snapshot, a snapshot of
// another host, an unknown PCI device list). Anything else is a fault.
import { compareView, type CompareView } from '../compare/view.js';
import { nul } from '../model/fact.js';
import { readNode } from '../engine/evaluate.js';
import { ConfigError, RootError, UsageError } from '../errors.js';
import { pciListUnknown } from '../inventory/pci-known.js';
import type { Inventory } from '../model/inventory.js';
import { SnapshotHost } from '../snapshot/open.js';
import { readSummary } from './summary.js';
import { isNodeHost } from './host-name.js';

/** Where a node's facts came from: the summary it wrote, or its snapshot (no summary, or a stale one: `note` says). */
export type FactSource = 'summary' | 'snapshot';

/** `time`: when the snapshot was taken (its manifest's time), ms since the epoch; null when it records none. */
export type ReadOne = { readonly view: CompareView; readonly source: FactSource; readonly note: string | null; readonly time: number | null } | { readonly why: string };

export interface WorkerJob {
  readonly i: number;
  readonly node: string;
  readonly file: string;
  /** The node's summary file when the directory holds one. */
  readonly summary: string | null;
}

/** A node read by a worker: the key of its view; the view itself the first time the worker sends the key. */
export interface WorkerRead {
  readonly key: string;
  readonly source: FactSource;
  readonly note: string | null;
  readonly time: number | null;
  readonly view?: CompareView;
}

export type WorkerAnswer = { readonly i: number } & (WorkerRead | { readonly why: string } | { readonly fatal: string });

// A snapshot that cannot be opened is named by its file: the fleet view has no --root.
const why = (e: unknown): string | null => (e instanceof RootError ? `${e.path}: ${e.detail}` : e instanceof UsageError || e instanceof ConfigError || (e as NodeJS.ErrnoException).code !== undefined ? (e as Error).message : null);

/**
 * Why a snapshot (or its summary) read without error still cannot be judged as `node`: taken on another host (a copy
 * saved under this node's name would be judged as this node), or its PCI device list is unknown (not recorded,
 * unreadable): every device fact would read as "no device". Null when it can.
 */
export function notThisNode(node: string, host: string | null, pciUnknown: string | null): string | null {
  if (pciUnknown !== null) return `the snapshot's PCI device list is unknown (${pciUnknown})`;
  if (host === null) return 'the snapshot records no host name: whose it is cannot be told';
  if (!isNodeHost(host, node)) return `the snapshot was taken on ${JSON.stringify(host.slice(0, 64))}, not on ${node}: not judged as ${node}`;
  return null;
}

/** The inventory of `node`'s snapshot and when it was taken, or why it cannot be judged as that node. */
export async function readSnapshotNode(node: string, file: string): Promise<{ readonly inv: Inventory; readonly time: number | null } | { readonly why: string }> {
  try {
    const { inv, host } = await readNode({ root: file, baseline: null, node, trust: [] });
    const bad = notThisNode(node, nul(inv.hostname), pciListUnknown(inv));
    return bad !== null ? { why: bad } : { inv, time: host instanceof SnapshotHost ? host.takenAt : null };
  } catch (e) {
    const w = why(e);
    if (w === null) throw e;
    return { why: w };
  }
}

export async function readFleetNode(node: string, file: string, summary: string | null): Promise<ReadOne> {
  let note: string | null = null;
  if (summary !== null) {
    const s = await readSummary(summary, node, file);
    if (s.ok) {
      const bad = notThisNode(node, s.summary.hostname, s.summary.pciUnknown);
      const at = s.summary.snapshot.time === null ? NaN : Date.parse(s.summary.snapshot.time);
      return bad !== null ? { why: bad } : { view: s.summary.view, source: 'summary', note: null, time: Number.isFinite(at) ? at : null };
    }
    note = `summary not used: ${s.why}; judged from the snapshot`;
  }
  const r = await readSnapshotNode(node, file);
  return 'why' in r ? { why: note ? `${r.why} (${note})` : r.why } : { view: compareView(r.inv), source: 'snapshot', note, time: r.time };
}
