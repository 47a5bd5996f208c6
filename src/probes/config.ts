// The `probes` section of the config (schemas/config.schema.json): tools, per-probe recipes, budget, sampling, bands.

export interface SamplingPolicy {
  /** Probe when SLURM_JOB_ID % N === 0. */
  readonly everyNthJob: number | null;
  /** Probe when at least this long has passed since the last probing run (stamp in the spool directory). */
  readonly minIntervalS: number | null;
  /** `any`: either rule is enough; `all`: both must agree (every Nth job, but not more often than T). */
  readonly combine: 'any' | 'all';
}

/** The look at the probed adapters' ports just before probing (src/epilog/port-traffic-rule.ts). */
export interface QuietSettings {
  /** The window between the two reads of each port's counters; 0: the look is off. */
  readonly windowMs: number;
  /** A port that moved more than this (sent plus received, Gb/s) over the window is busy: not probed. */
  readonly belowGbps: number;
}

export interface IbWriteBwSettings {
  readonly host: boolean;
  readonly gpu: boolean;
  /** Add `--use_cuda_dmabuf` to the GPU-memory run (open kernel module, perftest built with DMA-BUF). */
  readonly dmabuf: boolean;
  readonly msgSize: number;
  /** `-n`; ignored when durationS is set. */
  readonly iterations: number;
  /** `-D` seconds; null: iteration-bound. */
  readonly durationS: number | null;
  readonly qps: number;
  /** TCP port of perftest's out-of-band exchange (`-p`); probes run one at a time, so one port serves all. */
  readonly port: number;
  readonly timeoutMs: number;
  /** Site flags appended as they are (`-x 3`, `-R`): part of the recipe. */
  readonly extraArgs: readonly string[];
  /** Only these HCAs (default: every RDMA device with a PCI function). */
  readonly hcas: readonly string[] | null;
}

export interface NvbandwidthSettings {
  readonly testcases: readonly string[];
  /** `-j`: JSON output. */
  readonly json: boolean;
  /** `-b` buffer size in MiB; null: the tool's default. */
  readonly bufferMiB: number | null;
  readonly timeoutMs: number;
}

export interface ProbesConfig {
  readonly tools: { readonly ibWriteBw: string | null; readonly nvbandwidth: string | null; readonly numactl: string | null };
  readonly sampling: SamplingPolicy;
  /** Whole probing run, all probes together: the node stays COMPLETING meanwhile (DESIGN §5). */
  readonly budgetMs: number;
  /** Judge the p50 of the last `window` samples of each path... */
  readonly window: number;
  /** ...and only once it holds this many (one outlier never drains). */
  readonly minSamples: number;
  /** node_exporter textfile, rewritten (temp + rename) after each probing run. */
  readonly promFile: string | null;
  /** `baseline capture --with-probes`: runs per probe, and the bands as fractions of the captured p50. */
  readonly capture: { readonly runs: number; readonly warnRatio: number; readonly failRatio: number };
  readonly ibWriteBw: IbWriteBwSettings;
  readonly nvbandwidth: NvbandwidthSettings;
  /** The probed adapters' ports read twice `windowMs` apart before probing: moving more than `belowGbps`, not probed (src/epilog/port-traffic-rule.ts). */
  readonly quiet: QuietSettings;
}

export const NVBW_TESTCASES = ['host_to_device_memcpy_ce', 'device_to_host_memcpy_ce'] as const;

export const PROBE_DEFAULTS: ProbesConfig = {
  tools: { ibWriteBw: '/usr/bin/ib_write_bw', nvbandwidth: null, numactl: null },
  sampling: { everyNthJob: null, minIntervalS: 3600, combine: 'any' },
  budgetMs: 20_000,
  window: 5,
  minSamples: 3,
  promFile: null,
  capture: { runs: 3, warnRatio: 0.85, failRatio: 0.7 },
  ibWriteBw: { host: true, gpu: true, dmabuf: false, msgSize: 65536, iterations: 5000, durationS: null, qps: 1, port: 18515, timeoutMs: 8000, extraArgs: [], hcas: null },
  nvbandwidth: { testcases: NVBW_TESTCASES, json: false, bufferMiB: null, timeoutMs: 15_000 },
  quiet: { windowMs: 250, belowGbps: 1 },
};

/** The section as the JSON gives it: every key optional at every depth. */
export type ProbesConfigInput = { readonly [K in keyof ProbesConfig]?: ProbesConfig[K] extends object ? Partial<ProbesConfig[K]> : ProbesConfig[K] };

/** Fills what the (already schema-validated) JSON leaves out; an explicit sampling section replaces the default one whole. */
export function probesConfig(raw: ProbesConfigInput | undefined): ProbesConfig | null {
  if (raw === undefined) return null;
  const d = PROBE_DEFAULTS;
  const s = raw.sampling;
  return {
    tools: { ...d.tools, ...raw.tools },
    sampling: s === undefined ? d.sampling : { everyNthJob: s.everyNthJob ?? null, minIntervalS: s.minIntervalS ?? null, combine: s.combine ?? 'any' },
    budgetMs: raw.budgetMs ?? d.budgetMs,
    window: raw.window ?? d.window,
    minSamples: raw.minSamples ?? d.minSamples,
    promFile: raw.promFile ?? null,
    capture: { ...d.capture, ...raw.capture },
    ibWriteBw: { ...d.ibWriteBw, ...raw.ibWriteBw },
    nvbandwidth: { ...d.nvbandwidth, ...raw.nvbandwidth },
    quiet: { ...d.quiet, ...raw.quiet },
  };
}
