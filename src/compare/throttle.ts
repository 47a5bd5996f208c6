// compare A B: ports the kernel's PCIe link-speed cooling devices slow on the suspect and not on the reference.
import { nul } from '../model/fact.js';
import type { Inventory } from '../model/inventory.js';
import { linkHeld } from '../pcie/link-held.js';
import { diff, type Difference } from './types.js';
import { devicesOf } from './by-bdf.js';
import type { CompareView } from './view.js';

/**
 * Ports a cooling device holds below their top speed, at their state: a state above 0 whose port's Target Link Speed
 * is the top counts a link that merely runs slower (a slower device, an idle GPU), which is no throttle (pcie-throttle).
 */
export const coolingStates = (inv: Inventory): Map<string, number> =>
  new Map(
    inv.pcieCooling.state === 'present'
      ? inv.pcieCooling.value.flatMap((c) => (c.cur.state === 'present' && c.cur.value > 0 && nul(linkHeld(inv, c))?.held === true ? [[c.port, c.cur.value] as const] : []))
      : [],
  );

export function throttle(a: CompareView, b: CompareView): Difference[] {
  const sb = new Map(b.cooling);
  const pa = devicesOf(a);
  const out: Difference[] = [];
  for (const [port, s] of a.cooling) {
    const ref = sb.get(port) ?? 0;
    if (s > ref && pa.has(port)) out.push(diff('critical', 'link-speed', port, `throttled, state ${s}`, ref ? `state ${ref}` : 'not throttled', 'throttle-on'));
  }
  return out;
}
