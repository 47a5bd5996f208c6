// The fleet view's inputs, whatever brought them: one node's snapshot, and per-path bandwidth figures of nodes
// (from sample spools or from Prometheus). The loaders produce these; the judge reads only these.

import { MAX_BYTES_PER_S } from '../samples/sample.js';

// MAX_BYTES_PER_S (src/samples/sample.ts): no link a gate judges carries more; a figure above it is a broken exporter or
// parser, refused on input so a band never overflows to Infinity.
export { MAX_BYTES_PER_S };

/** Why a bandwidth figure (bytes per second) cannot be judged, or null: not finite, negative, or above any link. */
export function impossibleFigure(x: number): string | null {
  if (!Number.isFinite(x) || x < 0) return `${x} bytes/s`;
  return x > MAX_BYTES_PER_S ? `${x} bytes/s, above any link (at most ${MAX_BYTES_PER_S})` : null;
}

/** One bandwidth path of one node: a probe, its recipe, its rail; figures in bytes per second. */
export interface NodePathStat {
  readonly node: string;
  /** Probe id from the config (`gdr-write-gpu0-mlx5_0`). */
  readonly probe: string;
  readonly recipeHash: string;
  /** GPU PCI address, or null for a host-memory probe. */
  readonly gpu: string | null;
  /** RDMA device name, or null for a GPU-only probe. */
  readonly nic: string | null;
  readonly direction: string;
  /** Median of the node's samples of this path, bytes per second. */
  readonly p50: number;
  /** Nearest-rank minimum, bytes per second, or null when the source has none. */
  readonly min: number | null;
  readonly count: number;
  /** Where it came from: `spool:<file>` or `prometheus:<url>`. */
  readonly source: string;
}

/** What a collector or a loader says of a node it could not read: listed in the report, never waited for. */
export interface NodeMissing {
  readonly node: string;
  readonly why: string;
}

/** A path of a node whose figure was there and not judged (older than --max-age, ahead of the clock): never "absent". */
export interface WithheldPath {
  readonly node: string;
  readonly probe: string;
  readonly gpu: string | null;
  readonly nic: string | null;
  readonly direction: string;
}
