// PCI devices from /sys/bus/pci/devices: parent chain from the sysfs realpath (as NCCL's topology does), links, config.
import type { Host } from '../host/host.js';
import { ABSENT, type Fact, present, unknown, valueOf } from '../model/fact.js';
import { type Bdf, type LinkEnd, type PciDevice, UNPLACED } from '../model/inventory.js';
import { hex4 } from '../model/names.js';
import { silent, type PciConfig, type PcieCap } from '../model/pci.js';
import { sparseConfig } from '../parsers/pci-config.js';
import { parsePciConfigOnce } from './config-memo.js';
import { BDF_RE, HOST_BRIDGE_RE, isLinkWidth, parseCpuList, parseLinkSpeed, parsePciClass, parsePciId, parseLinkWidth, parseNumaNode } from '../parsers/sysfs.js';
import { readAerCounters } from './aer.js';
import { type PciKind, typeOf } from '../pcie/pci-kind.js';
import { factLinkBase, factParsed, factText, listWhole, type Notes, type Pacer, readWhy } from './read.js';

const DEV = '/sys/bus/pci/devices';

// What phase 1 reads of a device: where it is, and for display controllers only (GPU candidates) its vendor and
// class; absent (not read) for the others until phase 2.
export type PciSkeleton = Pick<PciDevice, 'bdf' | 'sysPath' | 'hostBridge' | 'bridges' | 'vendor' | 'classCode'>;

/** A display controller (VGA 0x0300, 3D 0x0302): only these can be GPUs, and only their vendor is needed now. */
const isDisplay = (classCode: Fact<number>): boolean => classCode.state === 'present' && (classCode.value >> 8 === 0x0300 || classCode.value >> 8 === 0x0302);

/**
 * Phase 1, every device: where it sits and what it is (realpath, class; vendor for display controllers, to
 * find the GPUs). A large node has hundreds of functions: the vendor of the few that matter is read in phase 2.
 */
export async function listPci(host: Host, notes: Notes): Promise<PciSkeleton[]> {
  const names = await listWhole(host, DEV, notes);
  const out = await Promise.all(
    names.filter((n) => BDF_RE.test(n)).map(async (bdf): Promise<PciSkeleton | null> => {
      const real = await host.realPath(`${DEV}/${bdf}`);
      if (!real.ok) {
        notes.add(`${DEV}/${bdf}`, real.reason);
        // A dangling link is a device gone since the listing; one that cannot be resolved (EACCES, EIO, a loop) is a
        // function there that cannot be told: unidentified, so a GPU or NIC of the baseline there is unknown, not missing.
        if (real.missing) return null;
        const why = `${DEV}/${bdf}: ${real.reason}`;
        return { bdf, sysPath: `${DEV}/${bdf}`, hostBridge: UNPLACED, bridges: [], vendor: ABSENT, classCode: unknown(why) };
      }
      const segs = real.value.split('/');
      // The root bus nearest the device: a VMD domain's (pci10000:00) lies inside the VMD endpoint's directory, below
      // the host bridge of its own domain (drivers/pci/controller/vmd.c), and its ports are the device's path.
      const hb = segs.findLastIndex((s) => HOST_BRIDGE_RE.test(s));
      // Every PCI function the kernel shows lies below a host bridge (/sys/devices/pciDDDD:BB/...); an entry that is
      // not a link to one (a capture copied with links dereferenced) has no place: unidentified, as an unresolvable one.
      if (hb < 0) {
        const why = `${DEV}/${bdf}: resolves to ${real.value}, under no PCI host bridge`;
        notes.add(`${DEV}/${bdf}`, why);
        return { bdf, sysPath: `${DEV}/${bdf}`, hostBridge: UNPLACED, bridges: [], vendor: ABSENT, classCode: unknown(why) };
      }
      const chain = segs.slice(hb + 1).filter((s) => BDF_RE.test(s));
      const classCode = await factParsed(host, `${real.value}/class`, parsePciClass, notes, 'absent');
      const vendor = isDisplay(classCode) ? await factParsed(host, `${real.value}/vendor`, parsePciId, notes, 'absent') : ABSENT;
      return {
        bdf,
        sysPath: real.value,
        hostBridge: segs[hb]!,
        bridges: chain.slice(0, -1),
        vendor,
        classCode,
      };
    }),
  );
  return out.filter((d): d is PciSkeleton => d !== null);
}

/**
 * The bridges on the paths of `endpoints` that the listing lacks (a port removed since it was listed, a capture that
 * left its link out): read where the device's own path says they are. Left out, the port above a device would read
 * as no port at all, and pcie-link would judge the device's link against the device's own maximum.
 */
export async function unlistedBridges(host: Host, listed: ReadonlyMap<Bdf, PciSkeleton>, endpoints: Iterable<Bdf>, notes: Notes): Promise<PciSkeleton[]> {
  const found = new Map<Bdf, PciSkeleton>();
  for (const e of endpoints) {
    const s = listed.get(e);
    // The usual case, every bridge listed, costs no split of the path.
    if (s === undefined || s.bridges.every((b) => listed.has(b) || found.has(b))) continue;
    const segs = s.sysPath.split('/');
    s.bridges.forEach((b, i) => {
      if (listed.has(b) || found.has(b)) return;
      const at = segs.indexOf(b);
      if (at < 0) return;
      notes.add(`${DEV}/${b}`, `not listed, though ${e} lies below it: read from ${segs.slice(0, at + 1).join('/')}`);
      found.set(b, { bdf: b, sysPath: segs.slice(0, at + 1).join('/'), hostBridge: s.hostBridge, bridges: s.bridges.slice(0, i), vendor: ABSENT, classCode: ABSENT });
    });
  }
  return Promise.all(
    [...found.values()].map(async (s) => ({ ...s, classCode: await factParsed(host, `${s.sysPath}/class`, parsePciClass, notes, 'absent') })),
  );
}

async function link(host: Host, dir: string, which: 'current' | 'max', notes: Notes): Promise<LinkEnd> {
  const [speed, width] = await Promise.all([
    factParsed(host, `${dir}/${which}_link_speed`, parseLinkSpeed, notes, 'the kernel reports "Unknown"'),
    factParsed(host, `${dir}/${which}_link_width`, parseLinkWidth, notes, 'the kernel reports no width (0 or 255)'),
  ]);
  return { speed, width };
}

/**
 * One end of the link from the PCI Express capability: a reserved speed encoding is unknown, never a number. A
 * function with no link (an RC integrated endpoint or event collector, model/pci.ts linkless) has none: absent.
 */
function fromRegisters(l: PcieCap['linkStatus'], what: string): LinkEnd {
  if (l === null) return { speed: ABSENT, width: ABSENT };
  return {
    speed: l.speed === null ? unknown(`${what} speed field holds a reserved encoding`) : present(l.speed),
    width: l.width === 0 ? unknown(`${what} width field is 0`) : isLinkWidth(l.width) ? present(l.width) : unknown(`${what} width field holds ${l.width}, none a link can have`),
  };
}

/** A header that answered (not all ones, not zeroed) with another base class than sysfs's `class` (phase 1). */
function otherClass(c: PciConfig, sysfsClass: number): boolean {
  return c.length >= 0x0c && c.vendorId !== 0xffff && c.vendorId !== 0 && c.classCode >> 16 !== sysfsClass >> 16;
}

/** A PCI Express function's configuration space, in bytes. */
const CONFIG_SPACE = 4096;

async function config(host: Host, dir: string): Promise<Fact<PciConfig>> {
  // On a live /sys only the parts the checks look at (~44 of 1024 dwords); a capture's file is read whole.
  const r = host.readParts ? await host.readParts(`${dir}/config`, sparseConfig) : await host.readBytes(`${dir}/config`, CONFIG_SPACE + 1);
  if (!r.ok) return r.missing ? ABSENT : unknown(readWhy(`${dir}/config`, r.reason));
  // drivers/pci/pci-sysfs.c: 256 or 4096 bytes. More is no kernel's file (a capture made up or broken): not judged.
  if (r.value.length > CONFIG_SPACE) return unknown(`${dir}/config: larger than ${CONFIG_SPACE} bytes, more than a PCI function's configuration space`);
  return present(parsePciConfigOnce(r.value));
}

/**
 * Phase 2, only the devices that matter (GPUs, RDMA NICs, bridges on their paths): everything else. A bridge
 * (`endpoint` false) is judged by its config space, link and NUMA node only: its driver, local CPUs and IOMMU
 * group are not read (nothing uses them; on an 8-GPU node that is ~100 reads fewer).
 */
export async function detailPci(host: Host, s: PciSkeleton, notes: Notes, endpoint: boolean, pacer: Pacer): Promise<PciDevice> {
  // Reads are synchronous: the event loop gets a turn now and then so the run's deadline can still fire.
  await pacer.turn();
  const d = s.sysPath;
  const read = await config(host, d);
  // A header of another vendor than sysfs says (a GPU's, read in phase 1) is not this function's config space (a
  // shifted or foreign read): nothing is taken from it, neither IDs nor links nor "no AER capability".
  // An all-ones header is no foreign read: it is the device's answer, no function responds (fallen off the bus);
  // kept, with nothing in it, for device-inventory to fail on.
  // Every function's class was read in phase 1: a header of another base class (a GPU's 03h in a NIC's 02h, a
  // bridge's 06h) is foreign too, for NICs and bridges whose vendor phase 1 does not read. (The base class only:
  // quirks adjust sub-class and programming interface, drivers/pci/quirks.c.)
  const cfg =
    read.state !== 'present' ? read
    : s.vendor.state === 'present' && read.value.vendorId !== s.vendor.value && !silent(read.value, s.vendor.value)
      ? unknown(`${d}/config: vendor ID 0x${hex4(read.value.vendorId)}, not the 0x${hex4(s.vendor.value)} of ${d}/vendor`)
    : s.classCode.state === 'present' && otherClass(read.value, s.classCode.value)
      ? unknown(`${d}/config: class 0x${read.value.classCode.toString(16).padStart(6, '0')}, not the 0x${s.classCode.value.toString(16).padStart(6, '0')} of ${d}/class`)
    : read;
  // Read as root, config space holds the registers sysfs's vendor, device and *_link_* files decode (IDs; Link
  // Status and Link Capabilities, PCIe Base 6.3 §7.5.3.6/§7.5.3.8): one read instead of seven per device.
  // Unprivileged (64-byte header), absent or unanswered (0xffff) or zeroed (0x0000) config: the sysfs files.
  const cv = cfg.state === 'present' ? cfg.value : null;
  const header = cv && cv.length >= 0x40 && cv.vendorId !== 0xffff && cv.vendorId !== 0 ? cv : null;
  const pcie = cv && cv.pcie.state === 'present' ? cv.pcie.value : null;
  const [vendor, device, driver, numaNode, localCpuList, current, max, iommu] = await Promise.all([
    isDisplay(s.classCode) ? s.vendor : header ? present(header.vendorId) : factParsed(host, `${d}/vendor`, parsePciId, notes, 'absent'),
    header ? present(header.deviceId) : factParsed(host, `${d}/device`, parsePciId, notes, 'absent'),
    endpoint ? factLinkBase(host, `${d}/driver`) : ABSENT, // the bound driver's name; absent when unbound
    factParsed(host, `${d}/numa_node`, parseNumaNode, notes, 'absent'),
    endpoint ? factText(host, `${d}/local_cpulist`, notes) : ABSENT,
    pcie ? fromRegisters(pcie.linkStatus, 'Link Status') : link(host, d, 'current', notes),
    pcie ? fromRegisters(pcie.linkCap, 'Link Capabilities') : link(host, d, 'max', notes),
    endpoint ? factLinkBase(host, `${d}/iommu_group`) : ABSENT,
  ]);
  // Root ports (port type 4) also carry aer_rootport_total_err_*; a root-bus bridge whose config cannot say may be one.
  const rootPort = pcie ? pcie.portType === 4 : s.bridges.length === 0 && !endpoint;
  // Config space walked to its end without an AER capability: the kernel shows no aer_* file (inventory/aer.ts).
  const aer = await readAerCounters(host, d, rootPort, notes, cv !== null && cv.aer.state === 'absent');
  const text = localCpuList.state === 'present' ? localCpuList.value : null;
  const parsed = text === null ? null : parseCpuList(text);
  if (parsed && !parsed.ok) notes.add(`${d}/local_cpulist`, parsed.error);
  // The kernel writes at least one CPU (all of them when the device has no affinity): an empty list is not one.
  const localCpus = parsed === null ? (localCpuList.state === 'unknown' ? localCpuList : ABSENT) : !parsed.ok ? unknown(`${d}/local_cpulist: ${parsed.error}`) : parsed.value.length ? present(parsed.value) : unknown(`${d}/local_cpulist: empty`);
  // Written out (the skeleton's fields first, as a spread of it would give them): a spread of a skeleton costs more.
  return { bdf: s.bdf, sysPath: s.sysPath, hostBridge: s.hostBridge, bridges: s.bridges, vendor, classCode: s.classCode, device, driver, numaNode, localCpuList, localCpus, current, max, config: cfg, iommuGroup: iommu, aer };
}

/** A function whose class could not be read, or a display controller whose vendor could not: what it is cannot be told. */
export const unidentified = (s: PciSkeleton): boolean => s.classCode.state !== 'present' || (isDisplay(s.classCode) && s.vendor.state !== 'present');

/** The ports a Direct NIC complex hangs from (pcie/acs-platform.ts): a function below one may be its GPU or DMA function. */
const COMPLEX_PORTS: ReadonlySet<PciKind> = new Set(['grace_rp', 'vera_rp', 'cx_switch', 'bf3_switch']);

/**
 * The unidentified functions that may belong to a Direct NIC complex unseen: their place unread, a bridge above them
 * not read, or the port right above them one a complex hangs from (a GPU whose vendor could not be read on a GH200's
 * Grace root port is no "no GPU there"). One on a root bus, or below other bridges all read, is not.
 */
export function unaccountedOf(skeletons: readonly PciSkeleton[], pci: ReadonlyMap<Bdf, PciDevice>): Bdf[] {
  return skeletons
    .filter((s) => {
      if (!unidentified(s)) return false;
      if ((pci.get(s.bdf)?.hostBridge ?? s.hostBridge) === UNPLACED) return true;
      if (pci.has(s.bdf)) return false;
      const port = pci.get(s.bridges[s.bridges.length - 1] ?? '');
      return s.bridges.some((b) => !pci.has(b)) || (port !== undefined && COMPLEX_PORTS.has(typeOf(port)));
    })
    .map((s) => s.bdf);
}

export function isGpu(s: PciSkeleton): boolean {
  return valueOf(s.vendor) === 0x10de && isDisplay(s.classCode);
}

/**
 * Functions below a ConnectX switch (vendor 0x15b3, bridge) that lies on a GPU or NIC path and that are not read yet:
 * on a ConnectX-8 complex the DMA function and its switch port sit beside the GPU's path, never on it. None on a
 * node without ConnectX switches, so no read more there.
 */
const SWITCHY: ReadonlySet<PciKind> = new Set(['cx_switch', 'bf3_switch', 'unknown']);

export function besideConnectX(detailed: readonly PciDevice[], all: readonly PciSkeleton[], have: ReadonlySet<Bdf>): PciSkeleton[] {
  // By its IDs too (pcie/pci-kind.ts): a ConnectX switch port whose class could not be read is one all the same, and a
  // function that cannot be told may be one (the DMA function below it was left unread: the complex not seen).
  const cx = new Set(detailed.filter((d) => (valueOf(d.vendor) === 0x15b3 && valueOf(d.classCode) === 0x060400) || SWITCHY.has(typeOf(d))).map((d) => d.bdf));
  if (cx.size === 0) return [];
  return all.filter((s) => !have.has(s.bdf) && s.bridges.some((b) => cx.has(b)));
}
