// The node side of the summaries: after `snapshot --out-dir` wrote DIR/<node>.tar.gz (a task of `fleet collect`'s
// srun step), the same task reads that very file back through the one engine and writes DIR/<node>.summary.json
// beside it (summary.ts), so `fleet report` compares what the snapshot holds without opening it.
import path from 'node:path';
import { readNode } from '../engine/evaluate.js';
import { writeAtomic } from '../host/files.js';
import { SnapshotHost } from '../snapshot/open.js';
import { buildSummary, summaryName } from './summary.js';

/** Writes the summary of `node`'s snapshot `file` (whose bytes are `gz`); returns its path. `sync`: fsync it (default, as the snapshot). */
export async function writeSummary(node: string, file: string, gz: Uint8Array, o: { readonly sync?: boolean } = {}): Promise<string> {
  const { inv, host } = await readNode({ root: file, baseline: null, node, trust: [] });
  const out = path.join(path.dirname(file), summaryName(node));
  writeAtomic(out, JSON.stringify(buildSummary(node, file, gz, inv, host instanceof SnapshotHost ? host.takenAt : null)) + '\n', { mode: 0o644, sync: o.sync ?? true });
  return out;
}
