// Compare against a baseline class instead of a second node: run the checks and turn what they flag into differences.
import type { Code } from '../checks/catalog.js';
import type { BaselineClass } from '../model/baseline.js';
import type { Finding } from '../model/finding.js';
import type { Inventory } from '../model/inventory.js';
import { runChecks } from '../runner/run.js';
import { CHECK_IDS } from '../checks/index.js';
import { diff, type Area, type Difference, type Impact } from './types.js';

/** Finding code → where it sits and how hard it hits the path; the response is the catalog's for that code. */
const MAP: Partial<Record<Code, readonly [Area, Impact]>> = {
  'inventory-missing': ['device', 'critical'],
  'inventory-extra': ['device', 'major'],
  'inventory-mismatch': ['device', 'major'],
  'firmware-mismatch': ['firmware', 'major'],
  'link-width-low': ['link-width', 'critical'],
  'link-speed-low': ['link-speed', 'major'],
  'link-speed-idle': ['link-speed', 'minor'],
  'acs-redirect': ['acs', 'critical'],
  'ats-off': ['ats', 'major'],
  'bar1-small': ['bar1', 'critical'],
  'ro-off': ['relaxed-ordering', 'major'],
  'aer-uncorrectable': ['aer', 'critical'],
  'aer-correctable': ['aer', 'major'],
  'aer-reporting-off': ['aer', 'major'],
  'throttle-on': ['link-speed', 'critical'],
  'payload-mps-over': ['payload', 'critical'],
  'payload-changed': ['payload', 'major'],
  'payload-policy-changed': ['payload', 'major'],
  'bar1-none': ['bar1', 'critical'],
  'bar1-outside': ['bar1', 'critical'],
  'iommu-translated': ['iommu', 'critical'],
  'iommu-mode-changed': ['iommu', 'major'],
  'mechanism-missing': ['gpudirect', 'critical'],
  'mechanism-wrong': ['gpudirect', 'major'],
  'uverbs-missing': ['gpudirect', 'major'],
  'memlock-low': ['memlock', 'critical'],
  'topology-remote-nic': ['topology', 'major'],
  'topology-numa-changed': ['numa', 'major'],
};

function toDifference(f: Finding): Difference | null {
  const code = f.code as Code;
  if (f.status !== 'fail' && f.status !== 'warn') return null; // pass, and "could not tell" (skip/error), are not differences
  const a = f.actual ?? f.message;
  const b = f.expected ?? '';
  if (code === 'driver-mismatch') return f.subject === 'kernel' ? diff('minor', 'kernel', 'node', a, b, code) : diff('major', 'driver', f.subject, a, b, code);
  if (code === 'topology-changed') return diff(f.status === 'fail' ? 'critical' : 'major', 'topology', f.subject, a, b, code);
  const m = MAP[code];
  return m ? diff(m[1], m[0], f.subject, a, b, code) : null;
}

export function diffAgainstBaseline(inv: Inventory, cls: BaselineClass): Difference[] {
  return runChecks({ inv, baseline: cls }, CHECK_IDS)
    .map(toDifference)
    .filter((d): d is Difference => d !== null);
}
