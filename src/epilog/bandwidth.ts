// The epilog's bandwidth judgement as a record (src/epilog/judge.ts makes its findings from probe samples, not from
// a check over the inventory): its codes and their wording, in the one catalog with every other record's.
import { defineRecord, type Codes } from '../checks/types.js';

const CODES = {
  'bw-ok': { tells: 'The recent bandwidth of this path is inside its baseline band for this recipe.', do: 'None.', layer: 'server' },
  'bw-gpu-path': {
    tells: 'GPU↔NIC path: GPUDirect RDMA from GPU memory is below its band while host memory on the same HCA is healthy, so the adapter and the fabric are fine and the fault is between this GPU and this NIC.',
    do: 'Check pcie-link and pcie-acs on this GPU↔NIC path (gdrgate check --only pcie-link,pcie-acs), the IOMMU mode, and the GPUDirect mechanism (nvidia_peermem loaded, or DMA-BUF with the open module); compare gdrgate topo with the reference node.',
    layer: 'server',
  },
  'bw-nic': {
    tells: 'Host memory and GPU memory are both below their bands on this HCA: the adapter, its own PCIe link or its port, not the GPU path.',
    do: "Check the HCA's link (pcie-link), port state and rate (ibstat), firmware and error counters; reseat or replace the adapter.",
    layer: 'fabric',
  },
  'bw-low': { tells: 'This path is below its band and no healthy counterpart narrows it down.', do: 'Compare with the reference node (gdrgate samples, gdrgate compare); rerun the probe by hand with the recipe shown.', layer: 'server' },
  'bw-gpu-host': {
    tells: "A GPU's copy-engine bandwidth to or from host memory is below its band: the GPU's own PCIe link or its root complex.",
    do: "Check the GPU's pcie-link (speed and width under load), its NUMA placement and the BIOS PCIe settings against the reference node.",
    layer: 'server',
  },
  'bw-pending': { tells: 'Too few samples with this recipe in the recent window to judge (one outlier never drains).', do: 'None: later epilogs add samples.', layer: 'server' },
  'bw-no-envelope': { tells: 'The baseline has no band for this path and recipe, so its samples are recorded but not judged.', do: 'Capture the bands on a known-good node with gdrgate baseline capture --with-probes, using the same probe settings.', layer: 'scheduler' },
  'bw-unit-mismatch': { tells: 'Samples of this path are in a different unit than its baseline band; they are never converted.', do: 'Recapture the band with the current tool settings (--report_gbits).', layer: 'scheduler' },
  'bw-band-invalid': { tells: 'The baseline band for this path is unusable (fail band above the warn band).', do: 'Fix failBelow/warnBelow in the baseline; gdrgate baseline validate.', layer: 'scheduler' },
  'bw-probe-failed': { tells: 'The probe ran but gave no measurement; the message carries the tool’s own failure. Never a drain by itself.', do: 'Run the recipe by hand on the node; if GPU memory fails while host memory works, check nvidia_peermem/DMA-BUF and memlock.', layer: 'server' },
  'bw-tool-unusable': { tells: 'The probe tool is missing, not executable or not root’s, so this probe was skipped.', do: 'Install the tool (perftest, nvbandwidth) at the configured absolute path, owned by root.', layer: 'scheduler' },
  'bw-budget': { tells: 'The epilog’s probe budget ran out before this probe; the next probing epilog starts with it.', do: 'None, or raise probes.budgetMs (the node stays COMPLETING meanwhile).', layer: 'scheduler' },
} as const satisfies Codes;

export const BANDWIDTH = defineRecord({ id: 'bandwidth', source: 'probe', codes: CODES });

export type BwCode = keyof typeof CODES;
