// Test-side generator: a GPU's `resourceN_resize` files (drivers/pci/pci-sysfs.c __resource_resize_show), one per resizable BAR.

export interface GenRebar {
  /** Resizable BARs: BAR index → the sizes it can take, in MiB (powers of two). None by default, as on a GPU without the capability. */
  rebar?: Readonly<Record<number, readonly number[]>>;
}

/** The mask as the kernel prints it: "%016llx\n", bit n set for a size of 2^n MiB. */
export function resizeMask(sizesMiB: readonly number[]): string {
  const mask = sizesMiB.reduce((m, s) => {
    const n = Math.log2(s);
    if (!Number.isInteger(n) || n < 0) throw new Error(`rebar size ${s} MiB: not a power of two`);
    return m | (1n << BigInt(n));
  }, 0n);
  return `${mask.toString(16).padStart(16, '0')}\n`;
}

export function rebarFiles(d: GenRebar): Record<string, string> {
  return Object.fromEntries(Object.entries(d.rebar ?? {}).map(([bar, sizes]) => [`resource${bar}_resize`, resizeMask(sizes)]));
}

/** Every power of two from `fromMiB` to `toMiB`. */
export const sizesMiB = (fromMiB: number, toMiB: number): number[] => {
  const out: number[] = [];
  for (let s = fromMiB; s <= toMiB; s *= 2) out.push(s);
  return out;
};
