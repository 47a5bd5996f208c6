// Pure parsers for sysfs attribute text (drivers/pci/pci-sysfs.c formats).

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** `current_link_speed`: "32.0 GT/s PCIe", "2.5 GT/s PCIe", "Unknown" (pci_speed_string). null = Unknown. */
export function parseLinkSpeed(text: string): Parsed<number | null> {
  const s = text.trim();
  if (s === 'Unknown' || s === '') return { ok: true, value: null };
  const m = /^(\d+(?:\.\d+)?) GT\/s(?: PCIe)?$/.exec(s);
  if (!m) return { ok: false, error: `unexpected link speed ${JSON.stringify(s)}` };
  return { ok: true, value: Number(m[1]) };
}

/** The widths a link can have (PCIe Base 6.3 §7.5.3.6, Maximum/Negotiated Link Width). */
const WIDTHS: ReadonlySet<number> = new Set([1, 2, 4, 8, 12, 16, 32]);
export const isLinkWidth = (n: number): boolean => WIDTHS.has(n);

/**
 * `current_link_width`, `max_link_width`: decimal lane count; 0 or 255 mean no link / not reported (the kernel's
 * PCIE_LNK_WIDTH_UNKNOWN). Any other number is no width: 63 is the field of an all-ones register, what a device that
 * no longer answers returns (pci-sysfs.c decodes it as it comes), never "x63".
 */
export function parseLinkWidth(text: string): Parsed<number | null> {
  const s = text.trim();
  if (!/^\d{1,3}$/.test(s)) return { ok: false, error: `unexpected link width ${JSON.stringify(s)}` };
  const n = Number(s);
  if (n === 0 || n === 255) return { ok: true, value: null };
  if (!WIDTHS.has(n)) return { ok: false, error: `link width ${n} is none a link can have (1, 2, 4, 8, 12, 16, 32)${n === 63 ? ': the field of an all-ones read, a device that does not answer' : ''}` };
  return { ok: true, value: n };
}

/** Hex of exactly `digits` digits after 0x, as the kernel prints it (pci-sysfs.c): a short value is a cut read. */
function hexOf(digits: number, what: string): (text: string) => Parsed<number> {
  const re = new RegExp(`^0x[0-9a-fA-F]{${digits}}$`);
  return (text) => {
    const s = text.trim();
    if (!re.test(s)) return { ok: false, error: `expected ${what} as 0x and ${digits} hex digits, got ${JSON.stringify(s.slice(0, 40))}` };
    return { ok: true, value: parseInt(s.slice(2), 16) };
  };
}

/** `vendor`, `device`: "0x10de" ("0x%04x"). */
export const parsePciId = hexOf(4, 'an ID');
/** `class`: "0x030200" ("0x%06x": class, subclass, programming interface). */
export const parsePciClass = hexOf(6, 'a class code');

/** `numa_node`: -1 means the firmware reported no affinity. */
export function parseNumaNode(text: string): Parsed<number | null> {
  const s = text.trim();
  // MAX_NUMNODES is at most 1024 (NODES_SHIFT 10): more digits are not a node number but a corrupt file.
  if (!/^-?\d{1,5}$/.test(s)) return { ok: false, error: `unexpected numa_node ${JSON.stringify(s.slice(0, 40))}` };
  const n = Number(s);
  return { ok: true, value: n < 0 ? null : n };
}

/** Inclusive CPU ranges, sorted and merged: [[0, 15], [32, 47]]. Never expanded CPU by CPU. */
export type CpuRanges = readonly (readonly [number, number])[];

/**
 * Bounds on a cpulist: the kernel prints at most NR_CPUS (8192 with MAXSMP) CPUs, so a longer text, more parts or a
 * higher CPU number is not a cpulist (a corrupt or hostile file), and parsing stops at the bound, not at the end.
 */
export const CPULIST_LIMITS = { chars: 16384, parts: 1024, maxCpu: (1 << 20) - 1 } as const;

/** Kernel cpulist ("0-15,32-47", bitmap_parselist) → merged ranges; work bounded by CPULIST_LIMITS. */
export function parseCpuList(text: string): Parsed<CpuRanges> {
  if (text.length > CPULIST_LIMITS.chars) return { ok: false, error: `cpulist of ${text.length} characters (more than ${CPULIST_LIMITS.chars})` };
  const s = text.trim();
  if (s === '') return { ok: true, value: [] };
  const parts = s.split(',', CPULIST_LIMITS.parts + 1);
  if (parts.length > CPULIST_LIMITS.parts) return { ok: false, error: `cpulist of more than ${CPULIST_LIMITS.parts} ranges` };
  const ranges: [number, number][] = [];
  for (const part of parts) {
    const m = /^(\d{1,7})(?:-(\d{1,7}))?$/.exec(part);
    if (!m) return { ok: false, error: `unexpected cpulist part ${JSON.stringify(part.slice(0, 40))}` };
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a || b > CPULIST_LIMITS.maxCpu) return { ok: false, error: `bad cpulist range ${part}` };
    ranges.push([a, b]);
  }
  return { ok: true, value: mergeCpus(ranges) };
}

/** Ranges in any order, overlapping or adjacent, as one sorted list of disjoint ranges (what a cpulist holds). */
export function mergeCpus(ranges: readonly (readonly [number, number])[]): CpuRanges {
  const out: [number, number][] = [];
  for (const r of [...ranges].sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

/** The CPUs of `a` that `b` holds too (both merged range lists). */
export function cpusWithin(a: CpuRanges, b: CpuRanges): CpuRanges {
  const out: [number, number][] = [];
  for (const [x, y] of a) for (const [u, v] of b) if (u <= y && x <= v) out.push([Math.max(x, u), Math.min(y, v)]);
  return out;
}

/** Whether every CPU of `a` lies in `b` (both merged range lists: a range of `a` lies within one range of `b`). */
export function cpusCovered(a: CpuRanges, b: CpuRanges): boolean {
  return a.every(([lo, hi]) => b.some(([x, y]) => x <= lo && hi <= y));
}

/** Whether two merged range lists share a CPU: one pass over both. */
export function cpusOverlap(a: CpuRanges, b: CpuRanges): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const [x, y] = [a[i]!, b[j]!];
    if (x[1] < y[0]) i++;
    else if (y[1] < x[0]) j++;
    else return true;
  }
  return false;
}

/**
 * `fw_ver` of an RDMA adapter ("28.39.1002", "2.11.500", "16.35.2000 (MT_0000000222)"): printable, short. Anything
 * else (control bytes, a megabyte of text) is not a version and must not be compared as one.
 */
export function parseFwVer(text: string): Parsed<string> {
  const s = text.trim();
  if (s === '') return { ok: false, error: 'fw_ver is empty' };
  if (s.length > 64 || !/^[\x21-\x7e][\x20-\x7e]*$/.test(s)) return { ok: false, error: `unexpected fw_ver ${JSON.stringify(s.slice(0, 40))}` };
  return { ok: true, value: s };
}

/**
 * A PCI domain as the kernel prints it, "%04x" of a 32-bit number (pci_name, pci_bus_add's "pci%04x:%02x"): four hex
 * digits, or five to eight past 0xffff with no leading zero (Intel VMD's 10000 and up; hwloc's 2pa-pcidomain32bits).
 */
const DOMAIN = '(?:[0-9a-f]{4}|[1-9a-f][0-9a-f]{4,7})';
/** A PCI address as the kernel names it: domain:bus:device.function. */
export const BDF_RE = new RegExp(`^${DOMAIN}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]$`);
/** A PCI root bus's directory in /sys/devices: pci + domain:bus. */
export const HOST_BRIDGE_RE = new RegExp(`^pci${DOMAIN}:[0-9a-f]{2}$`);
