// The typed model of one node, gathered once per run; checks read only this.
import type { AerCounters } from './aer.js';
import type { AreaFacts } from '../areas/index.js';
import type { Fact, Readable } from './fact.js';
import type { PciConfig } from './pci.js';
import type { CpuRanges } from '../parsers/sysfs.js';
import type { PciResource } from '../parsers/pci-resource.js';
import type { GresConf } from '../parsers/gres-conf.js';
import type { AspmPolicy, LinkAspmFile } from '../parsers/aspm.js';
import type { PciCmdline } from '../parsers/pci-cmdline.js';
import type { NvidiaDriver } from '../parsers/procfs.js';

export type Bdf = string; // 0000:17:00.0
export type PathClass = 'PIX' | 'PXB' | 'PHB' | 'NODE' | 'SYS';
/** A path class's distance, nearest first (nvidia-smi topo -m); one table for every judge of paths. */
export const PATH_RANK: Readonly<Record<PathClass, number>> = { PIX: 0, PXB: 1, PHB: 2, NODE: 3, SYS: 4 };
/** Whether a topology cell is a path class (the matrix writes `?` where it cannot tell). */
export const isPathClass = (c: string): c is PathClass => Object.hasOwn(PATH_RANK, c);

export interface LinkEnd {
  /** GT/s, from Link Status/Capabilities as root, else sysfs `*_link_speed` ("32.0 GT/s PCIe"; "Unknown" is unknown). */
  readonly speed: Fact<number>;
  /** Lanes; the kernel's 0 and 255 (no link, not reported) are unknown. */
  readonly width: Fact<number>;
}

export interface PciDevice {
  readonly bdf: Bdf;
  /** Kernel path of the device directory (`/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0`). */
  readonly sysPath: string;
  /** `pci0000:00`: the host bridge (root complex) the device hangs from. */
  /** `pciDDDD:BB`; UNPLACED where the function's place could not be read. */
  readonly hostBridge: string;
  /** PCI bridges from the root down to the device's parent (root port first). */
  readonly bridges: readonly Bdf[];
  /** IDs and class (config space as root, else sysfs `vendor`, `device`, `class`); unknown when unreadable or garbage. */
  readonly vendor: Fact<number>;
  readonly device: Fact<number>;
  readonly classCode: Fact<number>;
  /** Bound driver (`nvidia`, `mlx5_core`); GPUs and NICs only: absent for the bridges on their paths (not read). */
  readonly driver: Fact<string>;
  /** sysfs numa_node; absent when -1 (no affinity reported) or no file; unknown when unreadable or garbage. */
  readonly numaNode: Fact<number>;
  /** GPUs and NICs only, like driver and iommuGroup: the text as the kernel wrote it (shown), and parsed once. */
  readonly localCpuList: Fact<string>;
  readonly localCpus: Fact<CpuRanges>;
  readonly current: LinkEnd;
  readonly max: LinkEnd;
  readonly config: Fact<PciConfig>;
  /** The `iommu_group` link's last part; absent without one (no IOMMU) or on a bridge (not read). */
  readonly iommuGroup: Fact<string>;
  /** The kernel's AER counters (aer_dev_*, and aer_rootport_total_err_* on root ports); absent without an AER driver. */
  readonly aer: AerCounters;
}

export interface RdmaPort {
  readonly port: number;
  readonly state: Fact<string>; // "4: ACTIVE"
  readonly physState: Fact<string>; // "5: LinkUp"
  readonly rate: Fact<string>; // "400 Gb/sec (4X NDR)"
  readonly linkLayer: Fact<string>; // InfiniBand | Ethernet
}

export interface RdmaNic {
  readonly name: string; // mlx5_0
  /**
   * The PCI function `/sys/class/infiniband/<name>/device` resolves to. Absent: no `device` link, or one to a device that
   * is not a PCI function (soft RoCE rxe; siw on the loopback takes the netdev itself as parent, drivers/infiniband/sw/siw
   * siw_device_create). Unknown: the link could not be resolved (permission, a loop, a link leaving the root).
   */
  readonly bdf: Fact<Bdf>;
  /** `fw_ver`; an empty or unreadable file is unknown, never a version. */
  readonly fwVer: Fact<string>;
  readonly nodeGuid: Fact<string>;
  readonly ports: readonly RdmaPort[];
}

export interface Gpu {
  readonly bdf: Bdf;
  readonly device: Fact<number>;
  /** sysfs `resource` (BARs, ROM, …): where the GPUDirect window (BAR1) is read from. */
  readonly resource: Fact<readonly PciResource[]>;
  /** The parent bridge's `resource` (its windows); absent when the GPU sits on a root bus. */
  readonly upstream: Fact<readonly PciResource[]>;
}

export interface Limit {
  readonly soft: number | 'unlimited';
  readonly hard: number | 'unlimited';
}

export interface ProcessMemlock {
  readonly who: string; // "self", "slurmd", "job"
  /**
   * Which process, a key rather than a fact judged: `self` is /proc/self, the gate's own process, whose number is never
   * read; a number is the agent's client (given by its request) or slurmd, found by walking /proc; 'unfound': slurmd,
   * whose process a failed read kept from being found (its limit then unknown).
   */
  readonly pid: number | 'self' | 'unfound';
  /** Never absent: a process whose limits file cannot be read is unknown. */
  readonly limit: Readable<Limit>;
}

export interface Gpudirect {
  /** NCCL's three peer-memory files (net_ib.cc: ncclIbGdrSupport): their text (shown only). */
  readonly nvMem: Fact<string>; // /sys/kernel/mm/memory_peers/nv_mem/version
  readonly nvMemNc: Fact<string>; // /sys/kernel/mm/memory_peers/nv_mem_nc/version
  readonly nvidiaPeermem: Fact<string>; // /sys/module/nvidia_peermem/version
  /** /proc/driver/nvidia/version: absent without the NVIDIA module; unknown when unreadable or malformed. */
  readonly driver: Fact<NvidiaDriver>;
  readonly kernelRelease: Fact<string>;
  /** ib_uverbs loaded (listed, or /sys/module/ib_uverbs there: built in); unknown when that look failed and it is not listed. */
  readonly ibUverbs: Fact<boolean>;
  /** DMA-BUF for RDMA: open kernel module and kernel >= 5.12 (NCCL's ncclIbDmaBufSupport precondition); unknown when the driver or kernel could not be read. */
  readonly dmabuf: Fact<boolean>;
  /** nvidia_peermem (or MOFED's nv_peer_mem) loaded: one of NCCL's files there, or the module listed; unknown when a file could not be read. */
  readonly peermem: Fact<boolean>;
  /** NVreg_RegistryDwords as /proc/driver/nvidia/params shows it (PeerMappingOverride: GPU-initiated networking). */
  readonly registryDwords: Fact<Readonly<Record<string, string>>>;
}

export interface Iommu {
  /** Entries of /sys/class/iommu (dmar0, amd-iommu0, …). */
  readonly units: readonly string[];
  readonly groupCount: number;
  /** `iommu=`, `intel_iommu=`, `amd_iommu=` from /proc/cmdline; unknown where it is absent or unreadable. */
  readonly cmdline: Fact<Readonly<Record<string, string>>>;
  /** Group id → type (identity, DMA, DMA-FQ, blocked, unmanaged). */
  readonly groupTypes: Readonly<Record<string, string>>;
}

export interface NumaNode {
  readonly id: number;
  readonly cpuList: string;
  /** cpuList parsed once per run; unknown when it could not be read or parsed (a note says why), never "no CPUs". */
  readonly cpus: Fact<CpuRanges>;
}

/** A PCIe link-speed cooling device (drivers/thermal/pcie_cooling.c): the port it slows and its state. */
export interface PcieCooling {
  readonly device: string; // cooling_device12
  readonly port: Bdf;
  /** 0: full speed; n > 0: the kernel lowered the port's speed n steps. */
  readonly cur: Fact<number>;
  readonly max: Fact<number>;
  /**
   * The port's Link Control 2 Target Link Speed in GT/s, read only where `cur` is above 0 (the bandwidth controller
   * throttles by lowering it); absent otherwise.
   */
  readonly target: Fact<number>;
}

/** ASPM `link/` attributes of one device (drivers/pci/pcie/aspm.c): the ones the kernel shows, each on or off. */
export type LinkAspm = Readonly<Partial<Record<LinkAspmFile, boolean>>>;

/** What decides payload sizes and ASPM beyond each device's own registers (checks/pcie-payload.ts). */
export interface PayloadPolicy {
  /** `pci=pcie_bus_*` and `pcie_aspm=` from /proc/cmdline; unknown when it could not be read or parsed. */
  readonly cmdline: Fact<PciCmdline>;
  /** /sys/module/pcie_aspm/parameters/policy; absent on a kernel built without ASPM support. */
  readonly aspmPolicy: Fact<AspmPolicy>;
  /** Per device on a GPU↔NIC path: its `link/` ASPM attributes; an empty record when the kernel shows none. */
  readonly linkAspm: ReadonlyMap<Bdf, Fact<LinkAspm>>;
}

/** What job placement is judged by on the node side (checks/job-placement.ts). */
export interface Placement {
  /** The gres.conf read (the config's gresConf, else the one slurmd reads: inventory/gres-path.ts); absent when not there. */
  readonly gresPath: string;
  readonly gres: Fact<GresConf>;
  /** GPU device minor → PCI address (/proc/driver/nvidia/gpus/<BDF>/information). */
  readonly minors: Fact<ReadonlyMap<number, string>>;
  /** Slurm's abstract core index → OS CPUs; read only when gres.conf has Cores= (absent otherwise). */
  readonly cores: Fact<readonly CpuRanges[]>;
}

export interface Inventory {
  readonly root: string;
  readonly hostname: Fact<string>;
  readonly kernelRelease: Fact<string>;
  readonly pci: ReadonlyMap<Bdf, PciDevice>;
  /** PCI functions whose class (or, for a display controller, vendor) could not be read: a GPU among them is unknown, never missing. */
  readonly unidentified: readonly Bdf[];
  /**
   * Those of `unidentified` that may belong to a Direct NIC complex unseen (its DMA function, port or GPU): their place
   * unread, a bridge above them not read, or right below a Grace/Vera root port or a ConnectX/BlueField switch port
   * (inventory/pci.ts unaccountedOf). One on a root bus, or below other bridges all read, is not.
   */
  readonly unaccounted: readonly Bdf[];
  /** VPD V3 (the adapter's UUID) of each ConnectX NIC and DMA function, read only where a DMA function is (inventory/adapter-v3.ts). */
  readonly adapterV3: ReadonlyMap<Bdf, Fact<string>>;
  readonly gpus: readonly Gpu[];
  readonly nics: readonly RdmaNic[];
  readonly numa: readonly NumaNode[];
  /** /sys/devices/system/cpu/online: the CPUs a device's local CPUs are checked against the nodes' with (topo/classify.ts). */
  readonly cpusOnline: Fact<CpuRanges>;
  readonly iommu: Iommu;
  readonly gpudirect: Gpudirect;
  readonly memlock: readonly ProcessMemlock[];
  readonly modules: ReadonlySet<string>;
  /** PCIe link-speed cooling devices; unknown when /sys/class/thermal could not be listed. */
  readonly pcieCooling: Fact<readonly PcieCooling[]>;
  /** /proc/sys/kernel/random/boot_id: which boot the AER counters count from. */
  readonly bootId: Fact<string>;
  readonly placement: Placement;
  readonly payload: PayloadPolicy;
  /** What the area records that read their own files found (areas/index.ts), by the record's id. */
  readonly areas: AreaFacts;
  /** What could not be read while gathering, with why (shown in reports, never a failure by itself). */
  readonly notes: readonly string[];
}

/** The host bridge of a function whose /sys/bus/pci/devices entry could not be resolved: its place is unknown. */
export const UNPLACED = 'unknown';
