// Turns the inventory of a known-good node into a baseline class a human can read and edit.
import { acsPlatform } from '../pcie/acs-platform.js';
import { ConfigError } from '../errors.js';
import type { BaselineClass, BaselineDevice, BaselineEnvelope, IommuMode, Mechanism } from '../model/baseline.js';
import { valueOf as v } from '../model/fact.js';
import { type Inventory, isPathClass, type PciDevice } from '../model/inventory.js';
import { hex4 } from '../model/names.js';
import { AREAS } from '../areas/index.js';
import { topoMatrix } from '../topo/matrix.js';
import { VERSION } from '../version.js';
import { checkCaptureSize } from './limits.js';
import { capturePayload } from './payload.js';

export interface CaptureOptions {
  readonly name: string;
  readonly match: readonly string[];
  readonly platform: 'bare-metal' | 'virtualized';
  readonly at: string;
  /** Bandwidth bands measured on this node (`--with-probes`), recorded with their recipes. */
  readonly probes?: readonly BaselineEnvelope[];
  /** Write a class that expects no GPU and no RDMA adapter (`--allow-empty`): refused otherwise. */
  readonly allowEmpty?: boolean;
}

const min = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a == null ? (b ?? null) : b == null ? a : Math.min(a, b);

/** What the link can do (lower of both ends' maxima): an idle GPU's lowered speed must not become the baseline. */
export function linkCapability(inv: Inventory, d: PciDevice): { speed: number | null; width: number | null } {
  const parent = inv.pci.get(d.bridges[d.bridges.length - 1] ?? '');
  return { speed: min(v(d.max.speed), parent && v(parent.max.speed)) ?? v(d.current.speed) ?? null, width: min(v(d.max.width), parent && v(parent.max.width)) ?? v(d.current.width) ?? null };
}

/** A device record's keys in the order a class is written: what each area record adds lands in its place. */
const DEVICE_KEYS: readonly (keyof BaselineDevice)[] = ['bdf', 'role', 'name', 'fwVer', 'vendor', 'device', 'link', 'numaNode', 'acsCtl', 'ats', 'bar1', 'relaxedOrdering', 'errorReporting', 'aerCounters'];
function inOrder(d: BaselineDevice): BaselineDevice {
  const rest = (Object.keys(d) as (keyof BaselineDevice)[]).filter((k) => !DEVICE_KEYS.includes(k));
  return Object.fromEntries([...DEVICE_KEYS, ...rest].filter((k) => d[k] !== undefined).map((k) => [k, d[k]])) as unknown as BaselineDevice;
}

function mechanismOf(inv: Inventory): Mechanism {
  const g = inv.gpudirect;
  const peermem = v(g.peermem) === true;
  const dmabuf = v(g.dmabuf) === true;
  if (peermem && dmabuf) return 'any';
  return peermem ? 'peermem' : dmabuf ? 'dmabuf' : 'any';
}

/**
 * The class's IOMMU mode from the GPUs' and NICs' groups. A group (or its type) that could not be read is no mode:
 * 'any', said (an empty set of types read as 'off' failed every later node of the class, 16 fails on an HGX).
 */
function iommuOf(inv: Inventory, warnings: string[]): IommuMode {
  const groups = [...inv.gpus.map((g) => g.bdf), ...inv.nics.flatMap((n) => (n.bdf.state === 'present' ? [n.bdf.value] : []))].map((b) => inv.pci.get(b)?.iommuGroup);
  const unread = groups.find((g) => g?.state === 'unknown' || (g?.state === 'present' && inv.iommu.groupTypes[g.value] === undefined));
  if (unread) {
    warnings.push(`IOMMU mode not recorded: ${unread.state === 'unknown' ? unread.why : `the type of IOMMU group ${v(unread)} could not be read`}; the class says "any" (set it by hand)`);
    return 'any';
  }
  const types = Object.values(inv.iommu.groupTypes);
  if (types.length === 0) return 'off';
  if (types.every((t) => t === 'identity')) return 'passthrough';
  return types.every((t) => t === 'DMA' || t === 'DMA-FQ') ? 'translated' : 'any';
}

function acsPolicyOf(inv: Inventory, warnings: string[]): { acsPolicy?: 'classic' | 'direct-nic' } {
  const p = acsPlatform(inv);
  if (p.kind === 'unexpected' && p.topology === null) {
    warnings.push(`ACS policy not recorded: ${p.why}; each node of the class is judged by the platform it is found to be`);
    return {};
  }
  return { acsPolicy: p.kind === 'classic' ? 'classic' : 'direct-nic' };
}

/**
 * The class's memlock minimum: slurmd's soft limit (the Prolog and the jobs inherit it), else unlimited, the rule
 * without a baseline. Never the capturing process's own: that is the admin's shell's (8 MiB by default since Linux
 * 5.16, 64 KiB before), and taken as the minimum it let every later node pass with slurmd at that limit.
 */
function memlockOf(inv: Inventory, warnings: string[]): number | 'unlimited' {
  const slurmd = inv.memlock.find((p) => p.who === 'slurmd');
  if (!slurmd) return 'unlimited';
  if (slurmd.limit.state !== 'present') {
    const why = slurmd.limit.state === 'unknown' ? slurmd.limit.why : 'absent';
    warnings.push(`memlock minimum recorded as unlimited (the rule without a baseline): slurmd's limit could not be read (${why})`);
    return 'unlimited';
  }
  const soft = slurmd.limit.value.soft;
  if (soft !== 'unlimited') warnings.push(`memlock minimum recorded as slurmd's soft limit, ${soft} bytes, below unlimited (what RDMA registration of GPU memory is given without a baseline): is it really known-good?`);
  return soft;
}

/**
 * Refuses what a baseline must not hold before building it: no device at all (every later node would be judged
 * against nothing, and pass), or more paths or devices than load.ts accepts (limits.ts).
 */
export function captureClass(inv: Inventory, o: CaptureOptions): { cls: BaselineClass; warnings: string[] } {
  if (inv.gpus.length === 0 && inv.nics.length === 0 && !o.allowEmpty)
    throw new ConfigError('no GPU and no RDMA adapter on this node: its class would expect no devices, and a node judged against it checks nothing (--allow-empty writes it anyway)');
  const pciNics = inv.nics.flatMap((n) => (n.bdf.state === 'present' ? [{ n, bdf: n.bdf.value }] : []));
  checkCaptureSize(inv.gpus.length, pciNics.length, inv.gpus.length + inv.nics.length);
  const warnings: string[] = [];
  for (const n of inv.nics) if (n.bdf.state === 'unknown') warnings.push(`${n.name}: not in the class, its PCI function could not be read (${n.bdf.why})`);
  const m = topoMatrix(inv);
  const dev = (bdf: string, role: BaselineDevice['role'], extra: Partial<BaselineDevice> = {}): BaselineDevice | null => {
    const d = inv.pci.get(bdf);
    if (!d) return null;
    const link = linkCapability(inv, d);
    const cur = { speed: v(d.current.speed) ?? null, width: v(d.current.width) ?? null };
    if ((cur.speed !== null || cur.width !== null) && (cur.speed !== link.speed || cur.width !== link.width))
      warnings.push(`${bdf}: runs at ${cur.speed} GT/s x${cur.width} now; the baseline records what the link can do (${link.speed} GT/s x${link.width})`);
    const cfg = v(d.config);
    return inOrder({
      bdf,
      role,
      ...extra,
      ...(d.vendor.state === 'present' && d.device.state === 'present' ? { vendor: `0x${hex4(d.vendor.value)}`, device: `0x${hex4(d.device.value)}` } : {}),
      link,
      // Unread is not "none" (null, what numa_node -1 says): left out, said; a later node is not judged against it.
      numaNode: d.numaNode.state === 'unknown' ? (warnings.push(`${bdf}: NUMA node not recorded, ${d.numaNode.why}`), undefined) : (v(d.numaNode) ?? null),
      ...(role !== 'bridge' && cfg?.extReadable ? { ats: v(cfg.ats)?.enabled ?? false } : {}),
      // What each area record keeps of its family (ACS control, BAR1, Relaxed Ordering, error reporting).
      ...AREAS.reduce<Partial<BaselineDevice>>((kept, a) => ({ ...kept, ...a.captureDevice?.(inv, d, role) }), {}),
    });
  };
  const bridges = new Set<string>();
  for (const g of m.gpus) for (const n of m.nics) for (const b of m.path(g.label, n.label)?.peerBridges ?? []) bridges.add(b);
  const devices = [
    ...inv.gpus.map((g) => dev(g.bdf, 'gpu')),
    ...pciNics.map(({ n, bdf }) => dev(bdf, 'nic', { name: n.name, ...(v(n.fwVer) ? { fwVer: v(n.fwVer)! } : {}) })),
    ...[...bridges].sort().map((b) => dev(b, 'bridge')),
  ].filter((d): d is BaselineDevice => d !== null);
  checkCaptureSize(0, 0, devices.length); // the bridges on the paths count too
  // Only pairs of devices the class holds, of a class that could be computed: what validate (and every load) takes.
  const held = new Set(devices.map((d) => (d.role === 'nic' ? `nic ${d.name}` : `${d.role} ${d.bdf}`)));
  const paths = m.gpus.flatMap((g) =>
    m.nics.filter((n) => n.bdf).flatMap((n) => {
      const cls = m.cell(g.label, n.label);
      if (held.has(`gpu ${g.bdf}`) && held.has(`nic ${n.name}`) && isPathClass(cls)) return [{ gpu: g.bdf, nic: n.name, class: cls }];
      warnings.push(`GPU↔NIC path ${g.bdf}-${n.name} left out: ${isPathClass(cls) ? 'the class holds no such device' : `its class could not be computed (${cls})`}`);
      return [];
    }),
  );
  const g = inv.gpudirect;
  if (v(g.peermem) !== true && v(g.dmabuf) !== true && inv.nics.length > 0)
    warnings.push('no GPUDirect mechanism (nvidia_peermem or DMA-BUF) on this node: recorded mechanism "any", which this node itself fails; is it really known-good?');
  const cls: BaselineClass = {
    name: o.name,
    match: o.match,
    platform: o.platform,
    captured: { ...(v(inv.hostname) ? { host: v(inv.hostname)! } : {}), at: o.at, by: `gdrgate ${VERSION}` },
    ...(v(inv.kernelRelease) ? { kernel: v(inv.kernelRelease)! } : {}),
    ...(g.driver.state === 'present' ? { driver: { flavour: g.driver.value.flavour, version: g.driver.value.version } } : {}),
    mechanism: mechanismOf(inv),
    memlockMin: memlockOf(inv, warnings),
    iommu: iommuOf(inv, warnings),
    // A VM keeps isolation on (its hypervisor needs it); the virtualized class checks ATS instead.
    acsRedirectAllowed: o.platform === 'virtualized',
    // What pcie-acs found this node to be; "virtualized" (isolation kept) is only ever set by hand. Not told (a
    // function's IDs unread): left out, said; each node is then judged by what it is found to be.
    ...acsPolicyOf(inv, warnings),
    gpuSpeedStrict: false,
    devices,
    paths,
    payload: capturePayload(inv),
    ...(o.probes?.length ? { probes: o.probes } : {}),
  };
  return { cls, warnings };
}
