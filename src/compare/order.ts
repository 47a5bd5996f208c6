// The order compare and the fleet sort differences in: the base areas along the GPU↔NIC path, with each area record's
// own dimension placed where its record says (areas/index.ts).
import { AREAS as RECORDS } from '../areas/index.js';
import { byNatural, byText } from '../model/order.js';
import { BASE_AREAS, IMPACT_RANK, type Area, type Difference } from './types.js';

let order: readonly Area[] | null = null;

/** Every area a difference can carry, in path order: computed once, on first use (the registry imports compare's parts). */
export function compareAreas(): readonly Area[] {
  if (order) return order;
  const out: Area[] = [...BASE_AREAS];
  // Only a record with its own dimension has a place to say; the others compare under base areas.
  for (const r of RECORDS) {
    if (r.sortAfter === undefined || out.includes(r.id)) continue;
    const at = (out as readonly string[]).indexOf(r.sortAfter);
    out.splice(at < 0 ? out.length : at + 1, 0, r.id);
  }
  return (order = out);
}

/** Worst first, then by area along the path, then subject: the order an incident is worked in. */
export function sortDifferences(ds: readonly Difference[]): Difference[] {
  const rank = new Map<string, number>(compareAreas().map((a, i) => [a, i]));
  return [...ds].sort(
    (x, y) =>
      IMPACT_RANK[x.impact] - IMPACT_RANK[y.impact] ||
      (rank.get(x.area) ?? rank.size) - (rank.get(y.area) ?? rank.size) ||
      byNatural(x.subject, y.subject) ||
      byText(x.a, y.a),
  );
}
