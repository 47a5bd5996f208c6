// The wording table (field matrix): every check's own codes from the registry, the gate's own two, and the epilog's
// bandwidth codes. Wording is declared once, beside the check that makes the code (checks/<id>.ts `codes`).
import type { Layer } from '../model/finding.js';
import { CHECKS } from './index.js';
import type { Wording } from './types.js';

interface Entry {
  readonly tells: string;
  readonly response: string;
  readonly layer: Layer;
}

/** Codes the gate makes about itself, not a check: a configuration it cannot use, or its own failure. */
const GATE = {
  'config-error': { tells: 'The gate could not run: its configuration or baseline is invalid.', do: 'Fix the file named in the message; run gdrgate baseline validate.', layer: 'scheduler' },
  'internal-error': { tells: 'The gate itself failed.', do: 'Look at the gate log; report the error with a snapshot.', layer: 'scheduler' },
} as const satisfies Record<string, Wording>;

type CodesOf<T> = T extends { readonly codes: infer C } ? keyof C & string : never;

/** Every check code, the gate's codes too. */
export type Code = CodesOf<(typeof CHECKS)[number]> | keyof typeof GATE;

export const CATALOG: Readonly<Record<Code, Entry>> = Object.fromEntries(
  [...CHECKS.flatMap((c) => Object.entries(c.codes as Readonly<Record<string, Wording>>)), ...Object.entries(GATE)].map(([code, w]) => [code, { tells: w.tells, response: w.do, layer: w.layer }]),
) as Record<Code, Entry>;

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

/** The wording of a code: total over the codes the compiler knows, so no finding can render with a blank one. */
export function entry(code: Code | BwCode): Entry {
  return code in BW_CATALOG ? BW_CATALOG[code as BwCode] : CATALOG[code as Code];
}
