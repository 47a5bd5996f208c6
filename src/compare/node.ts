// Node-wide differences between two views: IOMMU, GPUDirect mechanism, modules, memlock, ATS, driver/firmware/kernel.
import { ABSENT, factText, nul, valueOf, whyUnknown, within } from '../model/fact.js';
import type { Inventory, Limit } from '../model/inventory.js';
import { formatBytes } from '../parsers/limits.js';
import { diff, type Difference } from './types.js';
import { devicesOf, sameNic } from './by-bdf.js';
import type { CompareView } from './view.js';

/** The modules on the GPU↔NIC path besides the mechanism itself (nvidia_peermem and ib_uverbs are gpudirect's). */
export const PATH_MODULES = ['nvidia', 'nvidia_uvm', 'ib_core', 'mlx5_core', 'mlx5_ib', 'rdma_cm', 'rdma_ucm', 'ib_umad', 'nvidia_fs', 'gdrdrv'];

/** Each GPU and NIC (by address; NICs shown by name) with the IOMMU mode its group gives it. */
export function iommuModes(inv: Inventory): Map<string, string> {
  const out = new Map<string, string>();
  const mode = (bdf: string): string => {
    const f = inv.pci.get(bdf)?.iommuGroup ?? ABSENT;
    if (f.state === 'unknown') return 'unknown';
    const g = nul(f);
    if (g === null) return inv.iommu.units.length ? 'no group' : 'off';
    const t = inv.iommu.groupTypes[g];
    if (t === undefined) return 'unknown';
    return t === 'identity' ? 'passthrough (identity)' : t === 'DMA' || t === 'DMA-FQ' ? `translated (${t})` : t;
  };
  for (const g of inv.gpus) out.set(g.bdf, mode(g.bdf));
  for (const n of inv.nics) if (n.bdf.state === 'present') out.set(n.name, mode(n.bdf.value));
  return out;
}

/** The IOMMU parameters of /proc/cmdline, sorted; `not readable` where it could not be read (never "none"). */
export const IOMMU_CMDLINE_UNREAD = 'not readable';
export const iommuCmdline = (inv: Inventory): string =>
  inv.iommu.cmdline.state !== 'present'
    ? IOMMU_CMDLINE_UNREAD
    : Object.entries(inv.iommu.cmdline.value)
        .map(([k, v]) => `${k}=${v}`)
        .sort()
        .join(' ') || 'none';

export function iommu(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  const ma = new Map(a.iommuModes);
  for (const [subject, y] of b.iommuModes) {
    // A GPU's subject is its address; an adapter's its name, matched to `a`'s adapter at the same address (sameNic).
    const nic = b.nics.find((n) => n.name === subject);
    const x = ma.get(nic ? (sameNic(a.nics, b.nics, nic)?.name ?? '') : subject);
    if (x === undefined || x === y) continue;
    if (x === 'unknown' || y === 'unknown') out.push(diff('minor', 'iommu', subject, x, y, 'unknown-side'));
    else if (x.startsWith('translated') && !y.startsWith('translated')) out.push(diff('critical', 'iommu', subject, x, y, 'iommu-translated'));
    else out.push(diff('major', 'iommu', subject, x, y, 'iommu-mode-changed'));
  }
  if (a.iommuCmdline !== b.iommuCmdline) {
    const unread = a.iommuCmdline === IOMMU_CMDLINE_UNREAD || b.iommuCmdline === IOMMU_CMDLINE_UNREAD;
    out.push(diff(unread ? 'minor' : 'major', 'iommu', 'cmdline', a.iommuCmdline, b.iommuCmdline, unread ? 'unknown-side' : 'iommu-mode-changed'));
  }
  return out;
}

export const mechanisms = (inv: Inventory): string[] => [valueOf(inv.gpudirect.peermem) ? 'peermem' : '', valueOf(inv.gpudirect.dmabuf) ? 'dmabuf' : ''].filter(Boolean);

/** Why a node's mechanisms could not be told (a peer-memory file or the driver unreadable), or null. */
export const mechanismsUnknown = (inv: Inventory): string | null => whyUnknown(inv.gpudirect.peermem, inv.gpudirect.dmabuf);

export function gpudirect(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  const [xa, xb] = [a.mechanisms, b.mechanisms];
  const [ua, ub] = [a.mechanismsUnknown, b.mechanismsUnknown];
  const [ta, tb] = [ua === null ? xa.join('+') || 'none' : `unknown (${ua})`, ub === null ? xb.join('+') || 'none' : `unknown (${ub})`];
  // A side that could not tell is never "no mechanism": said, minor, and not judged.
  if (ta !== tb && (ua !== null || ub !== null)) out.push(diff('minor', 'gpudirect', 'mechanism', ta, tb, 'unknown-side'));
  else if (ta !== tb) {
    const lost = xb.some((m) => !xa.includes(m));
    const impact = xa.length === 0 ? 'critical' : lost ? 'major' : 'minor';
    out.push(diff(impact, 'gpudirect', 'mechanism', ta, tb, xa.length === 0 ? 'mechanism-missing' : lost ? 'mechanism-wrong' : 'better-than-reference'));
  }
  // Each side in one wording whichever way they differ: the fleet counts a node that does not differ as holding the
  // reference's text (fleet/facts.ts), so `true` here and `loaded` there would be two values of one state.
  const uverbs = (x: boolean | null): string => (x === null ? 'unknown' : x ? 'loaded' : 'absent');
  if (a.ibUverbs !== b.ibUverbs && (a.ibUverbs === null || b.ibUverbs === null)) out.push(diff('minor', 'gpudirect', 'ib_uverbs', uverbs(a.ibUverbs), uverbs(b.ibUverbs), 'unknown-side'));
  else if (a.ibUverbs !== b.ibUverbs) {
    const lost = !a.ibUverbs;
    out.push(diff(lost ? 'major' : 'minor', 'gpudirect', 'ib_uverbs', uverbs(a.ibUverbs), uverbs(b.ibUverbs), lost ? 'uverbs-missing' : 'better-than-reference'));
  }
  return out;
}

export function modules(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  for (const m of PATH_MODULES) {
    const [ha, hb] = [a.modules.includes(m), b.modules.includes(m)];
    if (ha === hb) continue;
    out.push(ha ? diff('minor', 'module', m, 'loaded', 'absent', 'module-extra') : diff('major', 'module', m, 'absent', 'loaded', 'module-missing'));
  }
  return out;
}

export const limitText = (l: Limit): string => (l.soft === l.hard ? formatBytes(l.soft) : `${formatBytes(l.soft)} (hard ${formatBytes(l.hard)})`);
const below = (x: number | 'unlimited' | null, y: number | 'unlimited' | null): boolean => x !== null && y !== null && x !== 'unlimited' && (y === 'unlimited' || x < y);

/** Memlock of the same process role on both (self, slurmd): the pid differs between nodes and is not compared. */
export function memlock(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  for (const y of b.memlock) {
    const x = a.memlock.find((p) => p.who === y.who);
    if (!x) continue;
    if (!x.known || !y.known) {
      if (x.known !== y.known) out.push(diff('minor', 'memlock', y.who, x.text, y.text, 'memlock-unknown'));
      continue;
    }
    if (x.text === y.text) continue;
    const low = below(x.soft, y.soft) || below(x.hard, y.hard);
    out.push(diff(low ? 'critical' : 'minor', 'memlock', y.who, x.text, y.text, low ? 'memlock-low' : 'better-than-reference'));
  }
  return out;
}

/** ATS of a device as compare shows it; null when its config space was not read. */
export function atsState(inv: Inventory, bdf: string): string | null {
  const t = within(inv.pci.get(bdf)?.config ?? ABSENT, (c) => c.ats, 'config space absent');
  return t.state === 'unknown' ? null : t.state === 'absent' ? 'no ATS capability' : t.value.enabled ? 'enabled' : 'disabled';
}

/** ATS on each GPU and NIC both can read (a virtualized design relies on it: pcie-ats). */
export function ats(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  const [pa, pb] = [devicesOf(a), devicesOf(b)];
  for (const bdf of [...b.gpus.map((g) => g.bdf), ...b.nics.flatMap((n) => (n.bdf ? [n.bdf] : []))]) {
    const [x, y] = [pa.get(bdf)?.ats ?? null, pb.get(bdf)?.ats ?? null];
    if (x === null || y === null || x === y) continue;
    out.push(diff(y === 'enabled' ? 'major' : 'minor', 'ats', bdf, x, y, y === 'enabled' ? 'ats-off' : 'better-than-reference'));
  }
  return out;
}

export const driverText = (inv: Inventory): string => factText(inv.gpudirect.driver, (d) => `${d.flavour} ${d.version}`);

export function versions(a: CompareView, b: CompareView): Difference[] {
  const out: Difference[] = [];
  if (a.driver !== b.driver) out.push(a.driverUnknown || b.driverUnknown ? diff('minor', 'driver', 'nvidia', a.driver, b.driver, 'unknown-side') : diff('major', 'driver', 'nvidia', a.driver, b.driver, 'driver-mismatch'));
  for (const n of b.nics) {
    const x = sameNic(a.nics, b.nics, n);
    if (!x) continue;
    if (x.fw === n.fw) continue;
    const unread = x.fwUnknown || n.fwUnknown;
    out.push(diff(unread ? 'minor' : 'major', 'firmware', n.name, x.fw, n.fw, unread ? 'unknown-side' : 'firmware-mismatch'));
  }
  if (a.kernel !== b.kernel) out.push(diff('minor', 'kernel', 'node', a.kernel ?? 'unknown', b.kernel ?? 'unknown', 'driver-mismatch'));
  return out;
}
