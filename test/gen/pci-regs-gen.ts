// Test-side generator of Device Control (PCIe cap +0x08) and of sysfs `resource` (drivers/pci/pci-sysfs.c resource_show), modelled on the live H200's file:
// GPU BAR0 16 MiB, BAR1 at line 2, BAR3 32 MiB at line 4, all 64-bit prefetchable (flags 0x14220c); a ConnectX's
// BAR0 32 MiB likewise; a bridge's prefetchable window (line 15, flags 0x102201) spanning what lies below it.
import type { GenDevice } from './sysfs-tree.js';

export interface GenRegs {
  /** GPUs: the GPUDirect window (resource line 2) in GiB; 0 leaves it unassigned. Default 128 (H100 80 GB). */
  bar1GiB?: number;
  /** Device Control bit 4; default on for GPUs and NICs, off on bridges (as lspci shows on HGX nodes). */
  relaxedOrdering?: boolean;
  /** Max Payload Size, Max Read Request Size in bytes; defaults 256 and 4096 (endpoints) or 128 (bridges). */
  mps?: number;
  mrrs?: number;
  /** Device Control bits 0-3 (CorrErr, NonFatalErr, FatalErr, UnsupReq enables); default all four, as on HGX. */
  errorEnables?: number;
  /** Device Control bit 11 (Enable No Snoop); default on for endpoints. */
  noSnoop?: boolean;
}

/**
 * Device Control (PCIe Base 6.3 §7.5.3.4) at PCIe cap +0x08, as lspci shows a ConnectX-7 and an H100 on HGX nodes:
 * all four error reporting enables, RlxdOrd+ ExtTag+ NoSnoop+ MaxPayload 256 bytes, MaxReadReq 4096 bytes
 * (0x593f); a switch port: RlxdOrd- ExtTag+ NoSnoop-, MaxReadReq 128 bytes (0x012f).
 */
export function writeDevCtl(b: Buffer, pcie: number, d: GenDevice, bridge: boolean): void {
  const code = (bytes: number): number => Math.log2(bytes / 128);
  const ro = d.relaxedOrdering ?? !bridge;
  const ns = d.noSnoop ?? !bridge;
  const reg = (d.errorEnables ?? 0x000f) | (ro ? 0x10 : 0) | (code(d.mps ?? 256) << 5) | 0x100 | (ns ? 0x800 : 0) | (code(d.mrrs ?? (bridge ? 128 : 4096)) << 12);
  b.writeUInt16LE(reg, pcie + 0x08);
}

const MiB = 1n << 20n;
const GiB = 1n << 30n;
/** Endpoint BARs 0-5, ROM, six SR-IOV BARs: 13 lines; a bridge adds its I/O, memory, prefetchable windows and one more. */
const ENDPOINT_LINES = 13;
const BRIDGE_LINES = 17;
const PREF64 = 0x14220cn; // IORESOURCE_MEM_64 | SIZEALIGN | PREFETCH | MEM | PCI_BASE_ADDRESS_MEM_TYPE_64 | _PREFETCH
const BRIDGE_PREF64 = 0x102201n; // IORESOURCE_MEM_64 | PREFETCH | MEM | PCI_PREF_RANGE_TYPE_64

type Line = [start: bigint, end: bigint, flags: bigint];
const ZERO: Line = [0n, 0n, 0n];

/** One 512 GiB slot of address space per bus number, so no two devices' windows overlap. */
const baseOf = (d: GenDevice): bigint => 0x80000000000n + BigInt(parseInt(d.bdf.slice(5, 7), 16)) * 512n * GiB;

function bars(d: GenDevice): Line[] {
  const lines: Line[] = Array.from({ length: ENDPOINT_LINES }, () => ZERO);
  const x = baseOf(d);
  if (d.kind === 'gpu') {
    const size = BigInt(d.bar1GiB ?? 128) * GiB;
    lines[0] = [x + size, x + size + 16n * MiB - 1n, PREF64];
    if (size > 0n) lines[2] = [x, x + size - 1n, PREF64];
    lines[4] = [x + size + 32n * MiB, x + size + 64n * MiB - 1n, PREF64];
  } else if (d.kind === 'nic') lines[0] = [x, x + 32n * MiB - 1n, PREF64];
  return lines;
}

/** Prefetchable 64-bit ranges of a device and everything below it. */
function spans(d: GenDevice): Line[] {
  const own = d.kind === 'gpu' || d.kind === 'nic' ? bars(d).filter((l) => l[2] === PREF64) : [];
  return [...own, ...(d.children ?? []).flatMap(spans)];
}

export function resourceText(d: GenDevice, bridge: boolean): string {
  const hex = (n: bigint): string => `0x${n.toString(16).padStart(16, '0')}`;
  let lines: Line[];
  if (!bridge) lines = bars(d);
  else {
    lines = Array.from({ length: BRIDGE_LINES }, () => ZERO);
    const below = (d.children ?? []).flatMap(spans);
    // The bridge's window rounds out to 1 MiB, as pci_bus_distribute_available_resources leaves it aligned.
    if (below.length) lines[15] = [below.reduce((a, l) => (l[0] < a ? l[0] : a), below[0]![0]), below.reduce((a, l) => (l[1] > a ? l[1] : a), 0n) | (MiB - 1n), BRIDGE_PREF64];
  }
  return lines.map(([s, e, f]) => `${hex(s)} ${hex(e)} ${hex(f)}\n`).join('');
}
