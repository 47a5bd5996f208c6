// The registry: every check, by hand, in run and report order. Ids, order, reason labels, the wording table and the
// report schema's check enum (scripts/check-enum.mjs) all derive from this one list.
import deviceInventory from './device-inventory.js';
import gpuBar1 from './gpu-bar1.js';
import gpudirectMechanism from './gpudirect-mechanism.js';
import iommuMode from './iommu-mode.js';
import jobPlacement from './job-placement.js';
import memlockLimit from './memlock-limit.js';
import pcieAcs from './pcie-acs.js';
import pcieAer from './pcie-aer.js';
import pcieAts from './pcie-ats.js';
import pcieLink from './pcie-link.js';
import pciePayload from './pcie-payload.js';
import pcieRelaxedOrdering from './pcie-relaxed-ordering.js';
import pcieThrottle from './pcie-throttle.js';
import topologyDistance from './topology-distance.js';

export const CHECKS = [deviceInventory, pcieLink, pcieAcs, pcieAts, pcieRelaxedOrdering, pcieThrottle, pcieAer, pciePayload, gpuBar1, iommuMode, gpudirectMechanism, memlockLimit, topologyDistance, jobPlacement] as const;

export type CheckId = (typeof CHECKS)[number]['id'];

/** Run order and report order: the registry's. */
export const CHECK_IDS: readonly CheckId[] = CHECKS.map((c) => c.id);

/** Findings that come from the gate itself rather than from a check (the report schema lists them too). */
export const GATE_SOURCES = ['config', 'internal'] as const;

/** Drain-reason labels by finding source (for src/slurm/reason.ts). */
export const REASON_LABELS: Readonly<Record<CheckId | (typeof GATE_SOURCES)[number], string>> = {
  ...(Object.fromEntries(CHECKS.map((c) => [c.id, c.reasonLabel])) as Record<CheckId, string>),
  config: 'config',
  internal: 'internal',
};
