// What the areas' drill staging shares: kernel path parts and register patches of a config-space blob.

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

/** Config space with 32-bit register bits set and cleared; a blob too short to hold it is returned as it is. */
export function patch32(b: Uint8Array, at: number | undefined, set: number, clear = 0): Uint8Array {
  if (at === undefined || at + 4 > b.length) return b;
  const out = Uint8Array.from(b);
  const v = new DataView(out.buffer);
  v.setUint32(at, ((v.getUint32(at, true) | set) & ~clear) >>> 0, true);
  return out;
}

export const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');
