// A view's devices by address, built once per view (a fleet's reference is compared with every node).
import type { CompareView, DeviceView } from './view.js';

const built = new WeakMap<CompareView, ReadonlyMap<string, DeviceView>>();

export function devicesOf(v: CompareView): ReadonlyMap<string, DeviceView> {
  let m = built.get(v);
  if (!m) built.set(v, (m = new Map(v.pci.map((d) => [d.bdf, d]))));
  return m;
}

/** An RDMA adapter as compare knows it: its name, and its PCI address where it has one (null: none, or unread). */
interface Named {
  readonly name: string;
  readonly bdf: string | null;
}

/**
 * The adapter of `a` that is `b`'s adapter `n`: the one at the same address where both know it (names follow probe
 * order and udev rules: two adapters that swapped names are the same two adapters), else the one of the same name,
 * unless that one is another adapter that `b` has at its own address (then it is compared there, not here).
 */
export function sameNic<T extends Named>(a: readonly T[], b: readonly Named[], n: Named): T | undefined {
  const here = n.bdf === null ? undefined : a.find((x) => x.bdf === n.bdf);
  if (here !== undefined) return here;
  const named = a.find((x) => x.name === n.name);
  return named !== undefined && (named.bdf === null || !b.some((y) => y.bdf === named.bdf)) ? named : undefined;
}
