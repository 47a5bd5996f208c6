// One bandwidth measurement as the epilog records it (DESIGN §7), its exact probe recipe, and the recipe's stable hash.
import { createHash } from 'node:crypto';

/** How a number was measured; a value without its recipe is meaningless (DESIGN §4). */
export interface ProbeRecipe {
  /** `ib_write_bw`, `nvbandwidth`, ... */
  readonly tool: string;
  /** The argument vector exactly as passed (no shell). */
  readonly args: readonly string[];
  /** Bytes per message (ib_write_bw `-s`) or buffer (nvbandwidth `-b`, in bytes); null when the tool picks. */
  readonly msgSize: number | null;
  /** `-n` iterations, or null when the run is time-bound. */
  readonly iterations: number | null;
  /** `-D` seconds, or null when the run is iteration-bound. */
  readonly durationS: number | null;
  /** `-q` queue pairs; null for tools without QPs. */
  readonly qps: number | null;
  /** NUMA node the probe was bound to (`numactl -N`), or null when unbound. */
  readonly numaNode: number | null;
  /** What moves where, in the probe's own words: `gpu->nic`, `nic->gpu`, `h2d`, `d2h`, `bidir`. */
  readonly direction: string;
}

export type BandwidthUnit = 'Gb/s' | 'MB/s' | 'GB/s';
export const UNITS: readonly BandwidthUnit[] = ['Gb/s', 'MB/s', 'GB/s'];

/**
 * Bytes per second of one unit, the one table every figure is converted with (the textfile, the fleet, the bounds):
 * perftest's Gb/sec is 10^9 bit/s and its MB/sec 2^20 B/s (print_report_bw's format_factor, 0x100000 for MB/sec,
 * 125000000 for Gb/sec); nvbandwidth's GB/s is 10^9 B/s.
 */
export const BYTES_PER_SECOND: Readonly<Record<BandwidthUnit, number>> = { 'Gb/s': 1e9 / 8, 'MB/s': 2 ** 20, 'GB/s': 1e9 };
/**
 * No path a probe measures can move more than this: 10 TB/s. PCIe Gen6 x16 carries about 128 GB/s each way (256 GB/s
 * both), NVLink 5 1.8 TB/s per GPU (both ways, all links), NVLink-C2C 900 GB/s, a 800 Gb/s NIC 100 GB/s; even an HBM3e
 * stack's 8 TB/s is below it. A value above it is printed garbage, never a measurement.
 */
export const MAX_BYTES_PER_S = 1e13;

/** Why `value` in `unit` cannot be a measured bandwidth (not finite, zero or less, above MAX_BYTES_PER_S), or null. */
export function bandwidthProblem(value: number, unit: BandwidthUnit): string | null {
  if (!Number.isFinite(value)) return `${value} ${unit} is not a number`;
  if (value <= 0) return `${value} ${unit} is not above zero`;
  if (value * BYTES_PER_SECOND[unit] > MAX_BYTES_PER_S) return `${value} ${unit} is above 10 TB/s, more than a PCIe or NVLink path carries`;
  return null;
}

export interface Sample {
  /** Unix time in milliseconds: cheap to compare and window on 1M lines. */
  readonly ts: number;
  readonly node: string;
  /** Slurm job id, or null outside a job (manual run). */
  readonly job: string | null;
  /** Probe id from the config (`gdr-write-gpu0-mlx5_0`). */
  readonly probe: string;
  readonly recipeHash: string;
  readonly recipe: ProbeRecipe;
  /** GPU PCI address (`0000:1b:00.0`), or null for a host-memory probe. */
  readonly gpu: string | null;
  /** RDMA device name (`mlx5_0`), or null for a GPU-only probe (nvbandwidth). */
  readonly nic: string | null;
  readonly direction: string;
  readonly bytes: number;
  readonly value: number;
  readonly unit: BandwidthUnit;
  /** Whether the job this Epilog followed ran with gdrgate's NCCL_TOPO_FILE (docs/nccl-topo.md); absent: not known. */
  readonly ncclTopo?: boolean;
}

/** JSON with object keys sorted at every depth, arrays in order: the same recipe always gives the same text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** First 12 hex digits of sha256(canonical JSON of the recipe). */
export function recipeHash(recipe: ProbeRecipe): string {
  return createHash('sha256').update(canonicalJson(recipe)).digest('hex').slice(0, 12);
}

export function makeSample(fields: Omit<Sample, 'recipeHash' | 'direction'>): Sample {
  return { ...fields, direction: fields.recipe.direction, recipeHash: recipeHash(fields.recipe) };
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const numOrNull = (v: unknown): boolean => v === null || isNum(v);
const strOrNull = (v: unknown): boolean => v === null || isStr(v);

function isRecipe(v: unknown): v is ProbeRecipe {
  return isObj(v) && isStr(v['tool']) && Array.isArray(v['args']) && v['args'].every(isStr) && numOrNull(v['msgSize'])
    && numOrNull(v['iterations']) && numOrNull(v['durationS']) && numOrNull(v['qps']) && numOrNull(v['numaNode'])
    && isStr(v['direction']);
}

/** A sample read back from the spool, checked field by field; null when the line is not one. */
export function toSample(v: unknown): Sample | null {
  if (!isObj(v)) return null;
  const ok = isNum(v['ts']) && isStr(v['node']) && strOrNull(v['job']) && isStr(v['probe']) && isStr(v['recipeHash'])
    && isRecipe(v['recipe']) && strOrNull(v['gpu']) && strOrNull(v['nic']) && isStr(v['direction'])
    && isNum(v['bytes']) && isNum(v['value']) && UNITS.includes(v['unit'] as BandwidthUnit)
    && bandwidthProblem(v['value'], v['unit'] as BandwidthUnit) === null
    && (v['ncclTopo'] === undefined || typeof v['ncclTopo'] === 'boolean');
  return ok ? (v as unknown as Sample) : null;
}

export function parseSampleLine(line: string): Sample | null {
  try {
    return toSample(JSON.parse(line));
  } catch {
    return null;
  }
}

/** One spool line, newline included; null when a number is not finite (JSON would write null) or the value cannot be a bandwidth. */
export function sampleLine(s: Sample): string | null {
  if (!isNum(s.ts) || !isNum(s.bytes) || bandwidthProblem(s.value, s.unit) !== null) return null;
  return `${JSON.stringify(s)}\n`;
}
