// compare A B: each GPU's GPUDirect window (gpu-bar1), suspect against reference, by address.
import { valueOf } from '../model/fact.js';
import type { Inventory } from '../model/inventory.js';
import { bar1Window, sizeText } from '../parsers/pci-resource.js';
import { diff, type Difference } from './types.js';
import type { CompareView } from './view.js';

/** The window's size in bytes (decimal: JSON has no 64-bit integer), `none`, or unread. */
export type Bar1View = { readonly known: false } | { readonly known: true; readonly size: string | null };

export function bar1View(inv: Inventory, bdf: string): Bar1View {
  const rs = valueOf(inv.gpus.find((g) => g.bdf === bdf)?.resource ?? { state: 'absent' });
  if (rs === undefined) return { known: false };
  const w = bar1Window(rs);
  return { known: true, size: w ? w.size.toString() : null };
}

const sizeOf = (v: Bar1View | undefined): bigint | null | undefined => (v === undefined || !v.known ? undefined : v.size === null ? null : BigInt(v.size));
const text = (s: bigint | null | undefined): string => (s === undefined ? 'not readable' : s === null ? 'none' : sizeText(s));

export function bar1(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  for (const g of b.gpus) {
    const x = a.gpus.find((y) => y.bdf === g.bdf);
    if (!x) continue;
    const [sa, sb] = [sizeOf(x.bar1), sizeOf(g.bar1)];
    if (sa === sb) continue;
    if (sa === undefined || sb === undefined) out.push(diff('minor', 'bar1', g.bdf, text(sa), text(sb), 'unknown-side'));
    else if (sa === null || (sb !== null && sa < sb)) out.push(diff('critical', 'bar1', g.bdf, text(sa), text(sb), sa === null ? 'bar1-none' : 'bar1-small'));
    else out.push(diff('minor', 'bar1', g.bdf, text(sa), text(sb), 'better-than-reference'));
  }
  return out;
}
