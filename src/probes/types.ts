// What a probe is (planned from the inventory) and what running it gave (samples, or why none).
import type { ProbeRecipe, Sample } from '../samples/sample.js';

export type ProbeId = 'ib-write-host' | 'ib-write-gpu' | 'nvbw-h2d' | 'nvbw-d2h';

/** Directions as the samples record them (what moves where). */
export const DIRECTION: Readonly<Record<ProbeId, string>> = {
  'ib-write-host': 'host->nic->host',
  'ib-write-gpu': 'gpu->nic->gpu',
  'nvbw-h2d': 'h2d',
  'nvbw-d2h': 'd2h',
};

export interface IbWriteSpec {
  readonly kind: 'ib_write_bw';
  readonly probe: 'ib-write-host' | 'ib-write-gpu';
  readonly tool: string;
  readonly nic: string;
  /** GPU whose memory the run uses (ib-write-gpu), null for host memory. */
  readonly gpu: string | null;
  /** `--use_cuda=<index>`: position of the GPU in PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID is set). */
  readonly gpuIndex: number | null;
  /**
   * Every GPU BDF of the inventory, in PCI bus order: the bus:device perftest says it used must be one of theirs
   * only (perftest prints no domain), or the run could have measured any of those that share it.
   */
  readonly gpus: readonly string[];
  /** numactl binding (`-N n -m n`), when a numactl is configured and the HCA reports a node. */
  readonly numactl: { readonly path: string; readonly node: number } | null;
  readonly serverArgs: readonly string[];
  /** Client arguments; the recipe records these. */
  readonly args: readonly string[];
  readonly recipe: ProbeRecipe;
  readonly timeoutMs: number;
}

export interface NvbwSpec {
  readonly kind: 'nvbandwidth';
  readonly probe: 'nvbw-h2d' | 'nvbw-d2h';
  readonly tool: string;
  readonly testcase: string;
  readonly args: readonly string[];
  readonly recipe: ProbeRecipe;
  /** GPU BDFs in PCI bus order: nvbandwidth's device N when the output names no bus id. */
  readonly gpus: readonly string[];
  readonly timeoutMs: number;
}

export type ProbeSpec = IbWriteSpec | NvbwSpec;

/** One planned probe run, after running: samples, or the reason there are none. */
export type ProbeOutcome =
  | { readonly spec: ProbeSpec; readonly kind: 'ok'; readonly samples: readonly Sample[]; readonly durationMs: number; readonly notes: readonly string[] }
  | { readonly spec: ProbeSpec; readonly kind: 'failed'; readonly why: string; readonly lines: readonly string[]; readonly durationMs: number }
  /** The tool is missing, not executable or not trusted: skip, never an error of the node. */
  | { readonly spec: ProbeSpec; readonly kind: 'unusable'; readonly why: string }
  | { readonly spec: ProbeSpec; readonly kind: 'budget'; readonly why: string };

/** Who/where a sample comes from; the probe runner fills the measurement. */
export interface SampleContext {
  readonly node: string;
  readonly job: string | null;
  readonly now: () => number;
}

export const subjectOf = (s: ProbeSpec): string =>
  s.kind === 'ib_write_bw' ? (s.gpu ? `${s.nic}/${s.gpu}` : s.nic) : `${s.testcase}`;
