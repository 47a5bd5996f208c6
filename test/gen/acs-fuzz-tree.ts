// The differential fuzzer's tree surgery (acs-fuzz-gen.ts): a seeded random source that gives the same sequence on
// every platform, and the moves its mutation families make on a generated tree (where each function is, fresh bus and
// device numbers, a subtree re-addressed), with fresh IOMMU group numbers from GROUP_BASE per variant.
import { allDevices, type GenDevice, type GenHostBridge, type GenNode } from './sysfs-tree.js';
import { busOf } from './config-space.js';

/** mulberry32: small, fast, and the same sequence for a seed on every platform. */
export class Rng {
  private s: number;
  constructor(seed: number) { this.s = seed >>> 0 || 0x9e3779b9; }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number { return Math.floor(this.next() * n); }
  pick<T>(a: readonly T[]): T { if (!a.length) throw new Error('pick from nothing'); return a[this.int(a.length)]!; }
  chance(p: number): boolean { return this.next() < p; }
}

export interface Where { d: GenDevice; parent: GenDevice | null; hb: GenHostBridge }
export function places(n: GenNode): Where[] {
  const out: Where[] = [];
  const walk = (ds: GenDevice[], parent: GenDevice | null, hb: GenHostBridge): void => {
    for (const d of ds) { out.push({ d, parent, hb }); walk(d.children ?? [], d, hb); }
  };
  for (const hb of n.hostBridges) walk(hb.devices, null, hb);
  return out;
}
export const siblings = (w: Where): GenDevice[] => (w.parent ? w.parent.children! : w.hb.devices);
export const dom = (bdf: string): string => bdf.slice(0, 4);
export const bdfOf = (domain: string, bus: number, dev: number, fn = 0): string => `${domain}:${bus.toString(16).padStart(2, '0')}:${dev.toString(16).padStart(2, '0')}.${fn}`;
export const isBridgeKind = (d: GenDevice): boolean => d.kind === 'rootport' || d.kind === 'switch-up' || d.kind === 'switch-down';

/** A bus number no function of the domain uses yet (above every one in use, so it nests below any bridge). */
export function freshBus(n: GenNode, domain: string): number {
  const used = allDevices(n).filter((d) => dom(d.bdf) === domain).map((d) => busOf(d.bdf));
  const b = Math.max(0, ...used) + 1;
  if (b > 0xff) throw new Skip('no bus number left');
  return b;
}
/** The next free device number on the bus a bridge's children sit on. */
export const freeDev = (kids: GenDevice[]): number => Math.max(-1, ...kids.map((k) => busOf(k.bdf, 3))) + 1;
/** Re-address a subtree: its top on (domain, bus, dev), every bus below moved to fresh ones. */
export function rehome(n: GenNode, d: GenDevice, domain: string, bus: number, dev: number, fn = 0): void {
  const walk = (x: GenDevice, b: number, dv: number, f: number): void => {
    x.bdf = bdfOf(domain, b, dv, f);
    if (!x.children?.length) return;
    const sec = freshBus(n, domain);
    // Reserve it: give the first child the bus before looking for the next.
    const kids = x.children;
    const fns = kids.map((k) => [busOf(k.bdf, 3), Number(k.bdf.slice(-1))] as const);
    kids.forEach((k) => (k.bdf = bdfOf(domain, sec, 0x1f, 7))); // placeholders on the new bus
    kids.forEach((k, i) => walk(k, sec, fns[i]![0], fns[i]![1]));
  };
  walk(d, bus, dev, fn);
}

export class Skip extends Error {}

export const GROUP_BASE = 500;
let groupSeq = GROUP_BASE;
export const freshGroup = (): number => groupSeq++;
/** Group numbers start again at GROUP_BASE (each variant's). */
export const resetGroups = (): void => void (groupSeq = GROUP_BASE);

