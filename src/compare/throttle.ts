// compare A B: ports the kernel's PCIe link-speed cooling devices slow on the suspect and not on the reference.
import type { Inventory } from '../model/inventory.js';
import { diff, type Difference } from './types.js';

const states = (inv: Inventory): Map<string, number> =>
  new Map(inv.pcieCooling.state === 'present' ? inv.pcieCooling.value.flatMap((c) => (c.cur.state === 'present' ? [[c.port, c.cur.value] as const] : [])) : []);

export function throttle(a: Inventory, b: Inventory): Difference[] {
  const [sa, sb] = [states(a), states(b)];
  const out: Difference[] = [];
  for (const [port, s] of sa) {
    const ref = sb.get(port) ?? 0;
    if (s > ref && a.pci.has(port)) out.push(diff('critical', 'link-speed', port, `throttled, state ${s}`, ref ? `state ${ref}` : 'not throttled', 'throttle-on'));
  }
  return out;
}
