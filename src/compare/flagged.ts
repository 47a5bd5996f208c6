// What the universal rules flag on the suspect and not on the reference, in an area where no dimension already tells
// of a difference (the dimensions name subjects their own way: an adapter by name, the mechanism as 'mechanism'): the faults compare has no dimension for (an IOMMU group split, a device that stopped
// answering configuration reads) are differences too, so a node the Prolog fails is never "equivalent" to a good one.
import type { CheckId } from '../checks/index.js';
import type { Code } from '../checks/catalog.js';
import { CHECK_AREA, MAP } from './baseline.js';
import { diff, type Difference } from './types.js';
import type { CompareView } from './view.js';

export function flagged(a: CompareView, b: CompareView, told: readonly Difference[]): Difference[] {
  const onRef = new Set(b.flagged.map((f) => `${f.check} ${f.code} ${f.subject}`));
  const areas = new Set<string>(told.map((d) => d.area));
  const seen = new Set<string>();
  const out: Difference[] = [];
  for (const f of a.flagged) {
    if (onRef.has(`${f.check} ${f.code} ${f.subject}`) || !Object.hasOwn(CHECK_AREA, f.check)) continue;
    const m = MAP[f.code as Code];
    const area = m?.[0] ?? CHECK_AREA[f.check as CheckId];
    if (areas.has(area) || seen.has(`${area} ${f.subject}`)) continue;
    seen.add(`${area} ${f.subject}`);
    out.push(diff(m?.[1] ?? (f.status === 'fail' ? 'major' : 'minor'), area, f.subject, f.actual, `not flagged on the reference (${f.check} ${f.code})`, f.code as Code));
  }
  return out;
}
