// Node-wide differences between two inventories: IOMMU, GPUDirect mechanism, modules, memlock, ATS, driver/firmware/kernel.
import { ABSENT, factText, nul, valueOf, whyUnknown, within } from '../model/fact.js';
import type { Inventory, Limit } from '../model/inventory.js';
import { formatBytes } from '../parsers/limits.js';
import { diff, type Difference } from './types.js';

/** The modules on the GPU↔NIC path besides the mechanism itself (nvidia_peermem and ib_uverbs are gpudirect's). */
export const PATH_MODULES = ['nvidia', 'nvidia_uvm', 'ib_core', 'mlx5_core', 'mlx5_ib', 'rdma_cm', 'rdma_ucm', 'ib_umad', 'nvidia_fs', 'gdrdrv'];

/** Each GPU and NIC (by address; NICs shown by name) with the IOMMU mode its group gives it. */
function iommuModes(inv: Inventory): Map<string, string> {
  const out = new Map<string, string>();
  const mode = (bdf: string): string => {
    const g = nul(inv.pci.get(bdf)?.iommuGroup ?? ABSENT);
    if (g === null) return inv.iommu.units.length ? 'no group' : 'off';
    const t = inv.iommu.groupTypes[g];
    if (t === undefined) return 'unknown';
    return t === 'identity' ? 'passthrough (identity)' : t === 'DMA' || t === 'DMA-FQ' ? `translated (${t})` : t;
  };
  for (const g of inv.gpus) out.set(g.bdf, mode(g.bdf));
  for (const n of inv.nics) if (n.bdf) out.set(n.name, mode(n.bdf));
  return out;
}

export function iommu(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  const [ma, mb] = [iommuModes(a), iommuModes(b)];
  for (const [subject, y] of mb) {
    const x = ma.get(subject);
    if (x === undefined || x === y) continue;
    if (x === 'unknown' || y === 'unknown') out.push(diff('minor', 'iommu', subject, x, y, 'unknown-side'));
    else if (x.startsWith('translated') && !y.startsWith('translated')) out.push(diff('critical', 'iommu', subject, x, y, 'iommu-translated'));
    else out.push(diff('major', 'iommu', subject, x, y, 'iommu-mode-changed'));
  }
  const cmd = (inv: Inventory): string => Object.entries(inv.iommu.cmdline).map(([k, v]) => `${k}=${v}`).sort().join(' ') || 'none';
  if (cmd(a) !== cmd(b)) out.push(diff('major', 'iommu', 'cmdline', cmd(a), cmd(b), 'iommu-mode-changed'));
  return out;
}

const mechanisms = (inv: Inventory): string[] => [valueOf(inv.gpudirect.peermem) ? 'peermem' : '', valueOf(inv.gpudirect.dmabuf) ? 'dmabuf' : ''].filter(Boolean);

/** Why a node's mechanisms could not be told (a peer-memory file or the driver unreadable), or null. */
const mechanismsUnknown = (inv: Inventory): string | null => whyUnknown(inv.gpudirect.peermem, inv.gpudirect.dmabuf);

export function gpudirect(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  const [xa, xb] = [mechanisms(a), mechanisms(b)];
  const [ua, ub] = [mechanismsUnknown(a), mechanismsUnknown(b)];
  const [ta, tb] = [ua === null ? xa.join('+') || 'none' : `unknown (${ua})`, ub === null ? xb.join('+') || 'none' : `unknown (${ub})`];
  // A side that could not tell is never "no mechanism": said, minor, and not judged.
  if (ta !== tb && (ua !== null || ub !== null)) out.push(diff('minor', 'gpudirect', 'mechanism', ta, tb, 'unknown-side'));
  else if (ta !== tb) {
    const lost = xb.some((m) => !xa.includes(m));
    const impact = xa.length === 0 ? 'critical' : lost ? 'major' : 'minor';
    out.push(diff(impact, 'gpudirect', 'mechanism', ta, tb, xa.length === 0 ? 'mechanism-missing' : lost ? 'mechanism-wrong' : 'better-than-reference'));
  }
  if (a.gpudirect.ibUverbs !== b.gpudirect.ibUverbs) {
    const lost = !a.gpudirect.ibUverbs;
    out.push(diff(lost ? 'major' : 'minor', 'gpudirect', 'ib_uverbs', lost ? 'absent' : 'loaded', lost ? 'loaded' : 'absent', lost ? 'uverbs-missing' : 'better-than-reference'));
  }
  return out;
}

export function modules(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  for (const m of PATH_MODULES) {
    const [ha, hb] = [a.modules.has(m), b.modules.has(m)];
    if (ha === hb) continue;
    out.push(ha ? diff('minor', 'module', m, 'loaded', 'absent', 'module-extra') : diff('major', 'module', m, 'absent', 'loaded', 'module-missing'));
  }
  return out;
}

const limitText = (l: Limit): string => (l.soft === l.hard ? formatBytes(l.soft) : `${formatBytes(l.soft)} (hard ${formatBytes(l.hard)})`);
const below = (x: number | 'unlimited', y: number | 'unlimited'): boolean => x !== 'unlimited' && (y === 'unlimited' || x < y);

/** Memlock of the same process role on both (self, slurmd): the pid differs between nodes and is not compared. */
export function memlock(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  for (const y of b.memlock) {
    const x = a.memlock.find((p) => p.who === y.who);
    if (!x) continue;
    if (x.limit.state !== 'present' || y.limit.state !== 'present') {
      if (x.limit.state !== y.limit.state) out.push(diff('minor', 'memlock', y.who, x.limit.state === 'present' ? limitText(x.limit.value) : 'not readable', y.limit.state === 'present' ? limitText(y.limit.value) : 'not readable', 'memlock-unknown'));
      continue;
    }
    const [la, lb] = [x.limit.value, y.limit.value];
    if (limitText(la) === limitText(lb)) continue;
    const low = below(la.soft, lb.soft) || below(la.hard, lb.hard);
    out.push(diff(low ? 'critical' : 'minor', 'memlock', y.who, limitText(la), limitText(lb), low ? 'memlock-low' : 'better-than-reference'));
  }
  return out;
}

/** ATS on each GPU and NIC both can read (a virtualized design relies on it: pcie-ats). */
export function ats(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  const state = (inv: Inventory, bdf: string): string | null => {
    const t = within(inv.pci.get(bdf)?.config ?? ABSENT, (c) => c.ats, 'config space absent');
    return t.state === 'unknown' ? null : t.state === 'absent' ? 'no ATS capability' : t.value.enabled ? 'enabled' : 'disabled';
  };
  for (const bdf of [...b.gpus.map((g) => g.bdf), ...b.nics.flatMap((n) => (n.bdf ? [n.bdf] : []))]) {
    const [x, y] = [state(a, bdf), state(b, bdf)];
    if (x === null || y === null || x === y) continue;
    out.push(diff(y === 'enabled' ? 'major' : 'minor', 'ats', bdf, x, y, y === 'enabled' ? 'ats-off' : 'better-than-reference'));
  }
  return out;
}

export function versions(a: Inventory, b: Inventory): Difference[] {
  const out: Difference[] = [];
  const drv = (inv: Inventory): string => factText(inv.gpudirect.driver, (d) => `${d.flavour} ${d.version}`);
  const unreadDriver = a.gpudirect.driver.state === 'unknown' || b.gpudirect.driver.state === 'unknown';
  if (drv(a) !== drv(b)) out.push(unreadDriver ? diff('minor', 'driver', 'nvidia', drv(a), drv(b), 'unknown-side') : diff('major', 'driver', 'nvidia', drv(a), drv(b), 'driver-mismatch'));
  for (const n of b.nics) {
    const x = a.nics.find((m) => m.name === n.name);
    if (!x) continue;
    const [fa, fb] = [factText(x.fwVer), factText(n.fwVer)];
    if (fa === fb) continue;
    const unread = x.fwVer.state === 'unknown' || n.fwVer.state === 'unknown';
    out.push(diff(unread ? 'minor' : 'major', 'firmware', n.name, fa, fb, unread ? 'unknown-side' : 'firmware-mismatch'));
  }
  const [ka, kb] = [nul(a.kernelRelease) ?? 'unknown', nul(b.kernelRelease) ?? 'unknown'];
  if (ka !== kb) out.push(diff('minor', 'kernel', 'node', ka, kb, 'driver-mismatch'));
  return out;
}
