// A difference between a suspect node (A) and a known-good one (B), its impact on the GPU↔NIC path, and the response.
import { entry, type Code } from '../checks/catalog.js';
import type { AreaId } from '../areas/index.js';

export type Impact = 'critical' | 'major' | 'minor';

/** Areas in the order they bear on the GPU↔NIC path: a missing device first, a kernel string last. */
export const BASE_AREAS = [
  'device',
  'root-complex',
  'topology',
  'link-width',
  'acs',
  'bar1',
  'aer',
  'relaxed-ordering',
  'payload',
  'iommu',
  'gpudirect',
  'memlock',
  'link-speed',
  'numa',
  'ats',
  'module',
  'driver',
  'firmware',
  'kernel',
] as const;
/** A base area, or an area record's own id (areas/index.ts): an area that brings a new dimension compares under its id. */
export type Area = (typeof BASE_AREAS)[number] | AreaId;

export interface Difference {
  readonly impact: Impact;
  readonly area: Area;
  /** A BDF, an adapter name (mlx5_0), a GPU↔NIC pair (`0000:18:00.0-mlx5_0`), a process (`self`), or `node`. */
  readonly subject: string;
  /** The suspect's value, then the reference's, as an engineer would write them in a ticket. */
  readonly a: string;
  readonly b: string;
  readonly response: string;
}

export const IMPACT_RANK: Readonly<Record<Impact, number>> = { critical: 0, major: 1, minor: 2 };

/** Responses for differences the check catalog has no entry for; everything else reuses checks/catalog.ts. */
const LOCAL = {
  'device-renamed': 'Same adapter under another name: fix the rail mapping (NCCL_IB_HCA, topology file) or the udev naming rule to match the reference node.',
  'module-missing': 'Load the module as on the reference node (modprobe; rdma-core / MOFED / driver services) and find why it did not load at boot.',
  'module-extra': 'Confirm the extra module is intended; the reference node runs without it.',
  'better-than-reference': 'The suspect is ahead of the reference here: confirm the change is intended and recapture the reference if so.',
  'unknown-side': 'One side could not tell: not root, a file absent, or a snapshot from an older gdrgate that did not record it (its notes say "not recorded"). Take the snapshot again, as root and with this gdrgate, before concluding.',
} as const;

export type ResponseKey = Code | keyof typeof LOCAL;

const isLocal = (key: ResponseKey): key is keyof typeof LOCAL => key in LOCAL;

export function response(key: ResponseKey): string {
  return isLocal(key) ? LOCAL[key] : entry(key).do;
}

export function diff(impact: Impact, area: Area, subject: string, a: string, b: string, key: ResponseKey): Difference {
  return { impact, area, subject, a, b, response: response(key) };
}
