// Compare against a baseline class instead of a second node: run the checks and turn what they flag into differences.
import type { Code } from '../checks/catalog.js';
import type { BaselineClass } from '../model/baseline.js';
import type { Finding } from '../model/finding.js';
import type { Inventory } from '../model/inventory.js';
import { runChecks } from '../runner/run.js';
import { CHECK_IDS, type CheckId } from '../checks/index.js';
import { diff, type Area, type Difference, type Impact } from './types.js';

/** Finding code → where it sits and how hard it hits the path; the response is the catalog's for that code. */
export const MAP: Partial<Record<Code, readonly [Area, Impact]>> = {
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
  'payload-peer-mps': ['payload', 'critical'],
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
  'inventory-not-responding': ['device', 'critical'],
  'iommu-group-split': ['iommu', 'critical'],
  'iommu-group-shared': ['iommu', 'critical'],
  'iommu-kernel-domain': ['iommu', 'critical'],
  'acs-mask': ['acs', 'critical'],
  'acs-platform-mismatch': ['acs', 'major'],
  'peer-mapping-missing': ['gpudirect', 'major'],
  'gres-cores-far': ['numa', 'major'],
  'gres-cores-none': ['numa', 'minor'],
};

/** The codes a check may name without a difference (it passes, is not applicable, or could not tell). */
export const NOT_A_DIFFERENCE = /-(ok|na|unknown|unreadable|reset|unexpected)$/;

/** Where a check's "could not tell" sits: as node-to-node compare says it, a minor difference, never "equivalent". */
export const CHECK_AREA: Record<CheckId, Area> = {
  'device-inventory': 'device',
  'pcie-link': 'link-width',
  'pcie-acs': 'acs',
  'pcie-ats': 'ats',
  'gpu-bar1': 'bar1',
  'pcie-relaxed-ordering': 'relaxed-ordering',
  'pcie-aer': 'aer',
  'pcie-throttle': 'link-speed',
  'pcie-payload': 'payload',
  'iommu-mode': 'iommu',
  'gpudirect-mechanism': 'gpudirect',
  'memlock-limit': 'memlock',
  'topology-distance': 'topology',
  'job-placement': 'numa',
};

/**
 * A skip that says a device or path of the class could not be read (`-unknown`, `-unreadable`), or an error there;
 * not one that says "not applicable", and not one of the node as a whole (its cooling devices, its own limits),
 * which the class does not record either: node to node, only what one side read and the other did not is said.
 */
function couldNotTell(f: Finding, subjects: ReadonlySet<string>): boolean {
  return (f.status === 'error' || (f.status === 'skip' && /-(unknown|unreadable)$/.test(f.code))) && subjects.has(f.subject) && Object.hasOwn(CHECK_AREA, f.check);
}

/** What the class records per device and per path: a finding on one of them is on the class's ground. */
function subjectsOf(cls: BaselineClass): Set<string> {
  return new Set([...cls.devices.flatMap((d) => [d.bdf, ...(d.name ? [d.name] : [])]), ...cls.paths.map((p) => `${p.gpu}-${p.nic}`)]);
}

function toDifference(f: Finding, subjects: ReadonlySet<string>): Difference | null {
  const code = f.code as Code;
  if (couldNotTell(f, subjects)) return diff('minor', CHECK_AREA[f.check as CheckId], f.subject, `could not tell: ${f.message}`, f.expected ?? 'as the baseline', 'unknown-side');
  if (f.status !== 'fail' && f.status !== 'warn') return null; // pass, and "not applicable", are not differences
  const a = f.actual ?? f.message;
  const b = f.expected ?? '';
  if (code === 'driver-mismatch') return f.subject === 'kernel' ? diff('minor', 'kernel', 'node', a, b, code) : diff('major', 'driver', f.subject, a, b, code);
  if (code === 'topology-changed') return diff(f.status === 'fail' ? 'critical' : 'major', 'topology', f.subject, a, b, code);
  const m = MAP[code];
  if (m) return diff(m[1], m[0], f.subject, a, b, code);
  // A code the table does not know yet is never dropped: a node the Prolog fails is never "equivalent".
  return Object.hasOwn(CHECK_AREA, f.check) ? diff(f.status === 'fail' ? 'major' : 'minor', CHECK_AREA[f.check as CheckId], f.subject, a, b, code) : null;
}

export function diffAgainstBaseline(inv: Inventory, cls: BaselineClass): Difference[] {
  const subjects = subjectsOf(cls);
  return runChecks({ inv, baseline: cls }, CHECK_IDS)
    .map((f) => toDifference(f, subjects))
    .filter((d): d is Difference => d !== null);
}
