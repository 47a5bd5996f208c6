// Every finding code with what the signal tells us, the engineering response, and the layer that owns it (the field matrix).
import type { Layer } from '../model/finding.js';

interface Entry {
  readonly tells: string;
  readonly response: string;
  readonly layer: Layer;
}

export const CATALOG = {
  'inventory-ok': { tells: 'Device present as expected.', response: 'None.', layer: 'server' },
  'inventory-missing': { tells: 'A GPU or RDMA adapter of the baseline is not on the PCI bus: failed, unseated, or hidden by firmware.', response: 'Reseat or replace the device; check BMC/SEL for PCIe errors; compare lspci -tv with the reference node.', layer: 'server' },
  'inventory-extra': { tells: 'A device the baseline does not know: a changed build or a wrong baseline class.', response: 'Confirm the hardware change and recapture the baseline for this class.', layer: 'server' },
  'inventory-unknown': { tells: 'The vendor/device id at this address could not be read, so the model cannot be compared with the baseline.', response: 'Read it by hand (lspci -n -s <bdf>) as root; check the function answers configuration reads.', layer: 'server' },
  'inventory-mismatch': { tells: 'The device at this address is a different model than the baseline.', response: 'Check the bill of materials of the node; recapture if the change was intended.', layer: 'server' },
  'firmware-unknown': { tells: 'The adapter\'s firmware version could not be read (fw_ver missing, empty or unreadable), so it cannot be compared with the approved set.', response: 'Read it by hand (cat /sys/class/infiniband/<hca>/fw_ver, mlxfwmanager --query); check the driver exposes fw_ver.', layer: 'fabric' },
  'firmware-mismatch': { tells: 'Adapter firmware differs from the approved set; behaviour (PCIe, ATS, RDMA) can differ.', response: 'Flash the approved firmware (mlxfwmanager) or approve the new set fleet-wide.', layer: 'fabric' },
  'driver-mismatch': { tells: 'GPU driver or kernel differs from the approved set.', response: 'Reimage or roll the node to the approved driver/kernel set.', layer: 'server' },
  'link-ok': { tells: 'The link trained to the expected speed and width.', response: 'None.', layer: 'server' },
  'link-width-low': { tells: 'The link trained narrower than it can: bandwidth is cut by the same factor for every transfer through it.', response: 'Reseat the device or riser, check the slot and cable, look for AER errors; drain until fixed.', layer: 'server' },
  'link-speed-low': { tells: 'The link runs at a lower generation than it can: signal integrity, a retimer, or a BIOS limit.', response: 'Check BIOS PCIe speed settings, retimers and AER counters; reseat; compare with the reference node.', layer: 'server' },
  'link-speed-idle': { tells: 'A GPU link below its top speed may be the GPU saving power at idle (it retrains under load).', response: 'Confirm under load (nvidia-smi -q, Link Gen Current) before acting; set gpuSpeedStrict in the baseline to fail instead.', layer: 'server' },
  'link-na': { tells: 'No GPU or RDMA adapter link to check.', response: 'None.', layer: 'server' },
  'link-max-unknown': { tells: 'The link\'s current state was read but not what it can do (no max_link_*, no Link Capabilities, no baseline): whether it trained down cannot be told.', response: 'Run the gate as root (config space holds Link Capabilities), or judge against a baseline captured on the reference node.', layer: 'server' },
  'link-unknown': { tells: 'Link speed/width could not be read.', response: 'Run as root on the node; check the device is bound.', layer: 'server' },
  'acs-ok': { tells: 'No ACS redirect on the bridges between GPU and NIC: peer traffic can stay inside the switch.', response: 'None.', layer: 'server' },
  'acs-redirect': { tells: 'ACS redirect on a bridge between a GPU and a NIC sends every GPUDirect transfer up through the CPU root complex.', response: 'Disable ReqRedir/CmpltRedir/EgressCtrl on the switch ports (BIOS ACS option or setpci at boot) on bare metal; keep only where the platform needs isolation.', layer: 'server' },
  'acs-unreadable': { tells: 'ACS control is in extended config space, which only root can read.', response: 'Run the gate as root (Slurm Prolog does).', layer: 'scheduler' },
  'acs-na': { tells: 'No bridge lies between a GPU and an RDMA adapter on this node.', response: 'None.', layer: 'server' },
  'ats-unreadable': { tells: 'ATS is in extended config space, which only root can read.', response: 'Run the gate as root (Slurm Prolog does).', layer: 'scheduler' },
  'ats-na': { tells: 'No GPU or RDMA adapter to check ATS on.', response: 'None.', layer: 'server' },
  'ats-ok': { tells: 'Address Translation Services enabled as expected.', response: 'None.', layer: 'server' },
  'ats-off': { tells: 'ATS is off on a device where the virtualized design relies on it, so peer traffic is translated by the IOMMU on every access.', response: 'Enable ATS in the hypervisor/device assignment and the adapter firmware (ATS_ENABLED) as the reference node has it.', layer: 'server' },
  'iommu-ok': { tells: 'IOMMU mode matches the design for GPU/NIC peer traffic.', response: 'None.', layer: 'security' },
  'iommu-na': { tells: 'No GPU or RDMA adapter with a PCI function, so no IOMMU domain to judge.', response: 'None.', layer: 'security' },
  'iommu-unknown': { tells: 'The IOMMU group type of the device could not be read.', response: 'Run the gate as root; check /sys/kernel/iommu_groups/<n>/type.', layer: 'security' },
  'iommu-translated': { tells: 'The GPU or NIC sits in a translated IOMMU domain: peer-to-peer DMA is remapped or blocked.', response: 'Use iommu=pt (or identity domains for GPU/NIC) on bare metal, as the baseline states; get security sign-off for the mode.', layer: 'security' },
  'iommu-mode-changed': { tells: 'The IOMMU mode differs from the approved architecture of this class.', response: 'Restore the kernel command line of the reference node (iommu=, intel_iommu=, amd_iommu=).', layer: 'security' },
  'mechanism-ok': { tells: 'A GPUDirect RDMA mechanism is available.', response: 'None.', layer: 'server' },
  'mechanism-missing': { tells: 'Neither nvidia-peermem nor DMA-BUF is available: NCCL silently falls back to staging through host memory.', response: 'Load nvidia_peermem (modprobe nvidia-peermem) or move to the open kernel module with a kernel >= 5.12 for DMA-BUF.', layer: 'server' },
  'mechanism-wrong': { tells: 'The mechanism the class was validated with is not the one available now.', response: 'Load the expected module or update the baseline after validating the other mechanism.', layer: 'server' },
  'mechanism-na': { tells: 'No RDMA adapter or no GPU: GPUDirect RDMA does not apply.', response: 'None.', layer: 'server' },
  'uverbs-missing': { tells: 'RDMA adapters exist but ib_uverbs is not loaded: user space cannot open them.', response: 'Load ib_uverbs (rdma-core / MOFED service).', layer: 'fabric' },
  'memlock-ok': { tells: 'Locked-memory limit is high enough to register RDMA buffers.', response: 'None.', layer: 'scheduler' },
  'memlock-low': { tells: 'RLIMIT_MEMLOCK too low: RDMA memory registration fails or NCCL falls back to slow paths.', response: 'Set LimitMEMLOCK=infinity for slurmd and PropagateResourceLimitsExcept=MEMLOCK in slurm.conf; check /etc/security/limits.conf.', layer: 'scheduler' },
  'memlock-unknown': { tells: 'The locked-memory limit could not be read.', response: 'Run on the node with access to /proc.', layer: 'scheduler' },
  'topology-ok': { tells: 'GPU↔NIC placement matches the reference.', response: 'None.', layer: 'server' },
  'topology-changed': { tells: 'A GPU↔NIC pair is farther apart than on the reference node (a device moved slot, switch or socket).', response: 'Compare lspci -tv with the reference node; check risers and slot population against the build sheet.', layer: 'server' },
  'topology-remote-nic': { tells: "A GPU's nearest RDMA adapter is across the CPU interconnect: every GPUDirect transfer crosses sockets.", response: 'Check the rail mapping and NIC placement; set NCCL_IB_HCA / topology file if this is by design.', layer: 'server' },
  'topology-numa-changed': { tells: 'A device reports a different NUMA node than on the reference node.', response: 'Check BIOS NUMA/SNC settings against the reference node.', layer: 'server' },
  'topology-unknown': { tells: 'The GPU↔NIC path could not be computed (an RDMA device with no PCI function, or an unreadable tree).', response: 'Check that the RDMA adapter is a PCI device bound to its driver (ls -l /sys/class/infiniband/*/device).', layer: 'server' },
  'topology-numa-unknown': { tells: 'The NUMA node of a device could not be read (numa_node unreadable or malformed), so its placement cannot be compared.', response: 'Check /sys/bus/pci/devices/<bdf>/numa_node on the node; compare with the reference node.', layer: 'server' },
  'topology-na': { tells: 'No GPU↔NIC pair to place.', response: 'None.', layer: 'server' },
  'config-error': { tells: 'The gate could not run: its configuration or baseline is invalid.', response: 'Fix the file named in the message; run gdrgate baseline validate.', layer: 'scheduler' },
  'internal-error': { tells: 'The gate itself failed.', response: 'Look at the gate log; report the error with a snapshot.', layer: 'scheduler' },
} as const satisfies Record<string, Entry>;

export type Code = keyof typeof CATALOG;

/**
 * The epilog's bandwidth judgement (src/epilog/judge.ts), kept apart from the checks' table: its findings come from
 * probe samples, not from a check over the inventory, and test/epilog/catalog.test.ts keeps it complete.
 */
export const BW_CATALOG = {
  'bw-ok': { tells: 'The recent bandwidth of this path is inside its baseline band for this recipe.', response: 'None.', layer: 'server' },
  'bw-gpu-path': {
    tells: 'GPU↔NIC path: GPUDirect RDMA from GPU memory is below its band while host memory on the same HCA is healthy, so the adapter and the fabric are fine and the fault is between this GPU and this NIC.',
    response: 'Check pcie-link and pcie-acs on this GPU↔NIC path (gdrgate check --only pcie-link,pcie-acs), the IOMMU mode, and the GPUDirect mechanism (nvidia_peermem loaded, or DMA-BUF with the open module); compare gdrgate topo with the reference node.',
    layer: 'server',
  },
  'bw-nic': {
    tells: 'Host memory and GPU memory are both below their bands on this HCA: the adapter, its own PCIe link or its port, not the GPU path.',
    response: "Check the HCA's link (pcie-link), port state and rate (ibstat), firmware and error counters; reseat or replace the adapter.",
    layer: 'fabric',
  },
  'bw-low': { tells: 'This path is below its band and no healthy counterpart narrows it down.', response: 'Compare with the reference node (gdrgate samples, gdrgate compare); rerun the probe by hand with the recipe shown.', layer: 'server' },
  'bw-gpu-host': {
    tells: "A GPU's copy-engine bandwidth to or from host memory is below its band: the GPU's own PCIe link or its root complex.",
    response: "Check the GPU's pcie-link (speed and width under load), its NUMA placement and the BIOS PCIe settings against the reference node.",
    layer: 'server',
  },
  'bw-pending': { tells: 'Too few samples with this recipe in the recent window to judge (one outlier never drains).', response: 'None: later epilogs add samples.', layer: 'server' },
  'bw-no-envelope': { tells: 'The baseline has no band for this path and recipe, so its samples are recorded but not judged.', response: 'Capture the bands on a known-good node with gdrgate baseline capture --with-probes, using the same probe settings.', layer: 'scheduler' },
  'bw-unit-mismatch': { tells: 'Samples of this path are in a different unit than its baseline band; they are never converted.', response: 'Recapture the band with the current tool settings (--report_gbits).', layer: 'scheduler' },
  'bw-band-invalid': { tells: 'The baseline band for this path is unusable (fail band above the warn band).', response: 'Fix failBelow/warnBelow in the baseline; gdrgate baseline validate.', layer: 'scheduler' },
  'bw-probe-failed': { tells: 'The probe ran but gave no measurement; the message carries the tool’s own failure. Never a drain by itself.', response: 'Run the recipe by hand on the node; if GPU memory fails while host memory works, check nvidia_peermem/DMA-BUF and memlock.', layer: 'server' },
  'bw-tool-unusable': { tells: 'The probe tool is missing, not executable or not root’s, so this probe was skipped.', response: 'Install the tool (perftest, nvbandwidth) at the configured absolute path, owned by root.', layer: 'scheduler' },
  'bw-budget': { tells: 'The epilog’s probe budget ran out before this probe; the next probing epilog starts with it.', response: 'None, or raise probes.budgetMs (the node stays COMPLETING meanwhile).', layer: 'scheduler' },
} as const satisfies Record<string, Entry>;

export type BwCode = keyof typeof BW_CATALOG;

export function entry(code: string): Entry {
  return (CATALOG as Record<string, Entry>)[code] ?? (BW_CATALOG as Record<string, Entry>)[code] ?? { tells: '', response: '', layer: 'server' };
}
