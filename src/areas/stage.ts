// What the areas share: kernel path parts and register patches of a config-space blob for drill staging, and the
// capabilities of a device's config space for what baseline capture keeps.
import { type Fact, valueOf } from '../model/fact.js';
import type { BaselineDevice } from '../model/baseline.js';
import type { PciDevice } from '../model/inventory.js';
import type { Area } from './types.js';
import type { PciConfig } from '../model/pci.js';
import { parsePciConfig } from '../parsers/pci-config.js';

/** The config-space capabilities an area reads or patches (model/pci.ts PciConfig). */
type Cap = 'pcie' | 'acs';
type CapValue<K extends Cap> = PciConfig[K] extends Fact<infer T> ? T : never;

/** The last part of a kernel path (`config`, `aer_dev_fatal`). */
export const base = (p: string): string => p.slice(p.lastIndexOf('/') + 1);
/** `/sys/devices/pci0000:15/…/0000:18:00.0/config` → `0000:18:00.0`: the device a file belongs to. */
export const devOf = (p: string): string => base(p.slice(0, p.lastIndexOf('/')));

export const plus = (o: number | undefined, n: number): number | undefined => (o === undefined ? undefined : o + n);

/** Config space with one 16-bit register rewritten; a blob too short to hold it is returned as it is. */
export function patch16(b: Uint8Array, at: number | undefined, f: (v: number) => number): Uint8Array {
  if (at === undefined || at + 2 > b.length) return b;
  const out = Uint8Array.from(b);
  const v = f(out[at]! | (out[at + 1]! << 8));
  out[at] = v & 0xff;
  out[at + 1] = (v >> 8) & 0xff;
  return out;
}

/**
 * A fault that rewrites one 16-bit register, `offset` bytes into capability `cap`, in its own device's config space
 * (Staging.rewrite); every other file, and a blob without the capability, passes as it is.
 */
export function capRegister16<F extends { readonly bdf: string }>(cap: Cap, offset: number, edit: (f: F, v: number) => number): (f: F, p: string, b: Uint8Array) => Uint8Array {
  return (f, p, b) => {
    if (devOf(p) !== f.bdf || base(p) !== 'config') return b;
    const c: Fact<{ readonly offset: number }> = parsePciConfig(b)[cap];
    return patch16(b, plus(valueOf(c)?.offset, offset), (v) => edit(f, v));
  };
}

/** A capability of a device as the inventory read it; undefined when config space or the capability is absent or unknown. */
export function capOf<K extends Cap>(d: PciDevice, cap: K): CapValue<K> | undefined {
  const c = valueOf(d.config);
  return c ? valueOf(c[cap] as Fact<CapValue<K>>) : undefined;
}

/** What `baseline capture` keeps (Area.captureDevice) from one capability of the devices of one role. */
export function keepFromCap<K extends Cap>(role: BaselineDevice['role'], cap: K, keep: (c: CapValue<K>) => Partial<BaselineDevice>): NonNullable<Area['captureDevice']> {
  return (_inv, d, r) => {
    const c = r === role ? capOf(d, cap) : undefined;
    return c ? keep(c) : {};
  };
}

/** Config space with 32-bit register bits set and cleared; a blob too short to hold it is returned as it is. */
export function patch32(b: Uint8Array, at: number | undefined, set: number, clear = 0): Uint8Array {
  if (at === undefined || at + 4 > b.length) return b;
  const out = Uint8Array.from(b);
  const v = new DataView(out.buffer);
  v.setUint32(at, ((v.getUint32(at, true) | set) & ~clear) >>> 0, true);
  return out;
}

export const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
