// The baseline as validated by schemas/baseline.schema.json: what a known-good node of a class looks like.
import type { PathClass } from './inventory.js';
import type { Layer } from './finding.js';
import type { BandwidthUnit, ProbeRecipe } from '../samples/sample.js';
import type { LinkAspmFile } from '../parsers/aspm.js';
import type { BusPolicy } from '../parsers/pci-cmdline.js';

export type Mechanism = 'peermem' | 'dmabuf' | 'any';
export type IommuMode = 'off' | 'passthrough' | 'translated' | 'any';
export type AcsPolicy = 'classic' | 'direct-nic' | 'virtualized';

export interface BaselineLink {
  readonly speed: number | null;
  readonly width: number | null;
}

export interface BaselineDevice {
  readonly bdf: string;
  readonly role: 'gpu' | 'nic' | 'bridge';
  readonly name?: string;
  readonly vendor?: string;
  readonly device?: string;
  readonly link?: BaselineLink;
  readonly numaNode?: number | null;
  readonly fwVer?: string;
  /** lspci-style ACS control word of a bridge at capture time ("SrcValid+ ReqRedir- …"). */
  readonly acsCtl?: string;
  readonly ats?: boolean;
  /** GPUs: bytes of the GPUDirect window (largest 64-bit prefetchable BAR in `resource`) at capture time. */
  readonly bar1?: number;
  /** NICs: Device Control Relaxed Ordering (bit 4) at capture time. */
  readonly relaxedOrdering?: boolean;
  /** Device Control bits 0-3 at capture time, as lspci prints them ("CorrErr+ NonFatalErr+ FatalErr+ UnsupReq+"). */
  readonly errorReporting?: string;
  /** Whether the kernel kept AER counters (aer_dev_*) for the device at capture time. */
  readonly aerCounters?: boolean;
}

/** pcie-aer's rate: correctable errors grown since the reference run (previous Prolog, or the job's Prolog). */
export interface BaselineAer {
  /** More than this warns (default 0: every growth during one job). */
  readonly correctableWarnAbove: number;
  /** More than this fails (default 100). */
  readonly correctableFailAbove: number;
}

/** One GPU↔NIC path device's payload sizes and ASPM at capture time (checks/pcie-payload.ts). */
export interface BaselinePayloadDevice {
  readonly bdf: string;
  /** Device Control Max Payload Size and Max Read Request Size, bytes. */
  readonly mps: number;
  readonly mrrs: number;
  /** Link Control ASPM Control as lspci prints it: Disabled, L0s Enabled, L1 Enabled, L0s L1 Enabled. */
  readonly aspm: string;
  /** The `link/` ASPM attributes the kernel showed; a name not here was not shown. */
  readonly link?: Readonly<Partial<Record<LinkAspmFile, boolean>>>;
}

/** Payload sizes and ASPM of the reference node: judged against, one difference a warning (no universal values). */
export interface BaselinePayload {
  /** `pci=pcie_bus_*` on the reference's command line, or "default" (none given: the kernel's build default). */
  readonly busPolicy?: BusPolicy | 'default';
  /** `pcie_aspm=off|force`, or "default" (not given). */
  readonly pcieAspm?: 'off' | 'force' | 'default';
  /** The active ASPM policy (pcie_aspm.policy); null where the kernel has no ASPM support. */
  readonly aspmPolicy?: string | null;
  readonly devices: readonly BaselinePayloadDevice[];
}

export interface BaselinePath {
  readonly gpu: string;
  readonly nic: string;
  readonly class: PathClass;
}

/** Bandwidth band of one probe path, valid only for the exact recipe it was captured with (DESIGN §4, §7). */
export interface BaselineEnvelope {
  /** Probe id as the samples name it (`ib-write-gpu`). */
  readonly probe: string;
  readonly gpu: string | null;
  readonly nic: string | null;
  readonly direction: string;
  readonly recipe: ProbeRecipe;
  readonly unit: BandwidthUnit;
  /** Captured p50 and how many runs it came from: for the reader; the bands decide. */
  readonly p50: number;
  readonly samples: number;
  /** The recent window's p50 below this: warn; below failBelow (and the newest sample too): fail. */
  readonly warnBelow: number;
  readonly failBelow: number;
}

export interface BaselineClass {
  readonly name: string;
  readonly match: readonly string[];
  readonly platform: 'bare-metal' | 'virtualized';
  readonly captured?: { readonly host?: string; readonly at?: string; readonly by?: string };
  readonly kernel?: string;
  readonly driver?: { readonly flavour: 'open' | 'proprietary'; readonly version: string };
  readonly mechanism: Mechanism;
  /** Minimum RLIMIT_MEMLOCK in bytes, or "unlimited". */
  readonly memlockMin: number | 'unlimited';
  readonly iommu: IommuMode;
  /** Fail when ReqRedir/CmpltRedir/EgressCtrl is set on a bridge between a GPU and a NIC. */
  readonly acsRedirectAllowed: boolean;
  /**
   * Which ACS rule pcie-acs applies: classic (no redirect between GPU and NIC), direct-nic (the masks NVIDIA's
   * rdma_topo computes per port), virtualized (the kernel's isolation set kept). Absent: detected from the node.
   */
  readonly acsPolicy?: AcsPolicy;
  /** The class's jobs use GPU-initiated networking (NVSHMEM IBGDA): the driver must run with PeerMappingOverride=1. */
  readonly gpuInitiated?: boolean;
  /** GPUs may lower link speed at idle (power saving); true means speed must equal the baseline anyway. */
  readonly gpuSpeedStrict: boolean;
  /** Hand jobs the node's NCCL topology file when their /sys view differs from the host's (docs/nccl-topo.md); absent: off. */
  readonly ncclTopo?: boolean;
  /** pcie-aer's correctable-error rate; absent: the defaults (warn above 0, fail above 100). */
  readonly aer?: BaselineAer;
  readonly devices: readonly BaselineDevice[];
  readonly paths: readonly BaselinePath[];
  /** MPS, MRRS and ASPM of the GPU↔NIC path devices and the kernel's policies; absent in older baselines. */
  readonly payload?: BaselinePayload;
  /** Bandwidth envelopes from `baseline capture --with-probes`; absent: the epilog records samples but judges none. */
  readonly probes?: readonly BaselineEnvelope[];
}

export interface Baseline {
  readonly version: 1;
  readonly ownership?: Partial<Readonly<Record<Layer, string>>>;
  readonly classes: readonly BaselineClass[];
}
