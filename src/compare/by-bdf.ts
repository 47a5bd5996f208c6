// A view's devices by address, built once per view (a fleet's reference is compared with every node).
import type { CompareView, DeviceView } from './view.js';

const built = new WeakMap<CompareView, ReadonlyMap<string, DeviceView>>();

export function devicesOf(v: CompareView): ReadonlyMap<string, DeviceView> {
  let m = built.get(v);
  if (!m) built.set(v, (m = new Map(v.pci.map((d) => [d.bdf, d]))));
  return m;
}
