// compare A B: each GPU's GPUDirect window (gpu-bar1), suspect against reference, by address.
import { valueOf } from '../model/fact.js';
import type { Inventory } from '../model/inventory.js';
import { bar1Window, sizeText } from '../parsers/pci-resource.js';
import { diff, type Difference } from './types.js';

const windowOf = (inv: Inventory, bdf: string): bigint | null | undefined => {
  const rs = valueOf(inv.gpus.find((g) => g.bdf === bdf)?.resource ?? { state: 'absent' });
  return rs === undefined ? undefined : (bar1Window(rs)?.size ?? null);
};
const text = (s: bigint | null | undefined): string => (s === undefined ? 'not readable' : s === null ? 'none' : sizeText(s));

export function bar1(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  for (const g of b.gpus) {
    if (!a.gpus.some((x) => x.bdf === g.bdf)) continue;
    const [sa, sb] = [windowOf(a, g.bdf), windowOf(b, g.bdf)];
    if (sa === sb) continue;
    if (sa === undefined || sb === undefined) out.push(diff('minor', 'bar1', g.bdf, text(sa), text(sb), 'unknown-side'));
    else if (sa === null || (sb !== null && sa < sb)) out.push(diff('critical', 'bar1', g.bdf, text(sa), text(sb), sa === null ? 'bar1-none' : 'bar1-small'));
    else out.push(diff('minor', 'bar1', g.bdf, text(sa), text(sb), 'better-than-reference'));
  }
  return out;
}
