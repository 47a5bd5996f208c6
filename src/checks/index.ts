// The registry: every check, by hand, in report order.
import deviceInventory from './device-inventory.js';
import gpudirectMechanism from './gpudirect-mechanism.js';
import iommuMode from './iommu-mode.js';
import memlockLimit from './memlock-limit.js';
import pcieAcs from './pcie-acs.js';
import pcieAts from './pcie-ats.js';
import pcieLink from './pcie-link.js';
import topologyDistance from './topology-distance.js';
import type { Check } from './types.js';

export const CHECKS: readonly Check[] = [
  deviceInventory,
  pcieLink,
  pcieAcs,
  pcieAts,
  iommuMode,
  gpudirectMechanism,
  memlockLimit,
  topologyDistance,
];
