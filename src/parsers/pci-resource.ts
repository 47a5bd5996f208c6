// Pure decoder of sysfs `resource` (drivers/pci/pci-sysfs.c resource_show: "0x%016llx 0x%016llx 0x%016llx" per
// resource, start end flags) and the GPU's GPUDirect window in it (NVIDIA's GPUDirect RDMA guide, "PCI BAR sizes").
import type { Parsed } from './sysfs.js';

/** include/linux/ioport.h: IORESOURCE_MEM, IORESOURCE_PREFETCH, IORESOURCE_MEM_64, IORESOURCE_DISABLED, IORESOURCE_UNSET. */
export const IORESOURCE_MEM = 0x200;
export const IORESOURCE_PREFETCH = 0x2000;
export const IORESOURCE_MEM_64 = 0x100000;
export const IORESOURCE_DISABLED = 0x10000000;
export const IORESOURCE_UNSET = 0x20000000;
/** Lines 0..5 are the BARs (PCI_STD_RESOURCE_END); 6 is the ROM, then SR-IOV BARs, then a bridge's windows. */
const STD_BARS = 6;
/**
 * resource_show writes a line for every resource up to PCI_BRIDGE_RESOURCES (a function's BARs, its ROM and, with
 * CONFIG_PCI_IOV, its six SR-IOV BARs: 7 or 13 lines), a bridge's up to DEVICE_COUNT_RESOURCE (its four windows
 * after those: 11 or 17; 18 in some vendor kernels, test/fixtures/sysfs-real). Fewer is a read cut short or a torn
 * capture, whose missing lines nobody knows: never "no such BAR" or "no such window".
 */
export const FUNCTION_LINES = STD_BARS + 1;
export const BRIDGE_LINES = FUNCTION_LINES + 4;

export interface PciResource {
  readonly index: number;
  readonly start: bigint;
  readonly end: bigint;
  readonly flags: number;
}

export interface Bar1Window extends PciResource {
  readonly size: bigint;
}

/** resource_show's "0x%016llx" thrice: each field exactly 16 digits; a shorter one is a field cut short, never a value. */
const LINE_RE = /^0x([0-9a-f]{16}) 0x([0-9a-f]{16}) 0x([0-9a-f]{16})$/;

/**
 * Every line as the kernel wrote it; a line of another shape is an error (never a silent zero), and so is a file
 * shorter than the kernel writes for any function (`min`: a bridge's, with its windows, is BRIDGE_LINES).
 */
export function parseResource(text: string, min: number = FUNCTION_LINES): Parsed<PciResource[]> {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const out: PciResource[] = [];
  for (const [index, l] of lines.entries()) {
    const m = LINE_RE.exec(l.trim());
    if (!m) return { ok: false, error: `resource line ${index}: ${JSON.stringify(l.slice(0, 60))} is not "start end flags"` };
    out.push({ index, start: BigInt(`0x${m[1]}`), end: BigInt(`0x${m[2]}`), flags: Number(BigInt(`0x${m[3]}`) & 0xffffffffn) });
  }
  if (out.length === 0) return { ok: false, error: 'resource is empty' };
  if (out.length < min) return { ok: false, error: `resource has ${out.length} line(s), fewer than the kernel writes (${min}${min === BRIDGE_LINES ? ', a bridge with its windows' : ''}): cut short` };
  return { ok: true, value: out };
}

/**
 * A resource with an address. One the kernel could not place keeps its size and flags with IORESOURCE_UNSET, start 0
 * and end size-1 (drivers/pci/probe.c __pci_read_base "initial BAR value invalid", setup-res.c pci_assign_resource
 * "failed to assign", pci_release_resource); a bridge window not decoded carries IORESOURCE_DISABLED. Neither is an
 * address range, whatever its start and end say (resource_show prints them as they are on kernels before the
 * "backwards compatibility" zeroing of such bridge windows).
 */
const assigned = (r: PciResource): boolean => r.end > r.start && (r.flags & (IORESOURCE_UNSET | IORESOURCE_DISABLED)) === 0;
const has = (r: PciResource, bits: number): boolean => (r.flags & bits) === bits;
const PREF64 = IORESOURCE_MEM | IORESOURCE_PREFETCH | IORESOURCE_MEM_64;
/** Lines 0..5 that are 64-bit prefetchable memory BARs with a size, assigned or not (an unassigned one is 0..size-1). */
const pref64 = (rs: readonly PciResource[]): Bar1Window[] =>
  rs.slice(0, STD_BARS).flatMap((r) => (r.end > r.start && has(r, PREF64) ? [{ ...r, size: r.end - r.start + 1n }] : []));

/**
 * The largest 64-bit prefetchable memory BAR: BAR1 on A100 (line 1), line 2 on H100/H200 whose BAR0 is 64-bit
 * too. Null when there is none, or when the largest has no address (IORESOURCE_UNSET: the BIOS or kernel could not
 * place it): a smaller BAR that was placed is not the GPUDirect window.
 */
export function bar1Window(rs: readonly PciResource[]): Bar1Window | null {
  let best: Bar1Window | null = null;
  for (const r of pref64(rs)) if (!best || r.size > best.size || (r.size === best.size && assigned(r) && !assigned(best))) best = r;
  return best && assigned(best) ? best : null;
}

/** The 64-bit prefetchable BARs the kernel left without an address, largest first (what bar1-none names). */
export function unassignedBars(rs: readonly PciResource[]): Bar1Window[] {
  return pref64(rs)
    .filter((r) => !assigned(r))
    .sort((a, b) => (a.size === b.size ? a.index - b.index : a.size > b.size ? -1 : 1));
}

/** True when [start, end] lies inside one of a bridge's memory windows (the lines after its BARs and ROM) that decodes. */
export function insideWindow(w: PciResource, bridge: readonly PciResource[]): boolean {
  return assigned(w) && bridge.slice(STD_BARS + 1).some((r) => assigned(r) && has(r, IORESOURCE_MEM) && r.start <= w.start && w.end <= r.end);
}

/** `256 GiB`, `32 MiB`: the unit nvidia-smi's "BAR1 Memory Usage" rounds to is MiB. */
export function sizeText(bytes: bigint): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = bytes;
  while (i < units.length - 1 && v >= 1024n && v % 1024n === 0n) {
    v /= 1024n;
    i++;
  }
  return `${v} ${units[i]}`;
}

/** `resource` text with line `index` ending `bytes` after its start (a BIOS that gave the BAR a smaller window). */
export function shrinkResource(text: string, index: number, bytes: bigint): string {
  return text
    .split('\n')
    .map((l, i) => {
      const m = i === index ? LINE_RE.exec(l.trim()) : null;
      if (!m) return l;
      const end = BigInt(`0x${m[1]}`) + bytes - 1n;
      return `0x${m[1]!.padStart(16, '0')} 0x${end.toString(16).padStart(16, '0')} 0x${m[3]!.padStart(16, '0')}`;
    })
    .join('\n');
}
