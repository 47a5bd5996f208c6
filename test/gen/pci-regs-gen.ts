// Test-side generator of Device Capabilities/Control and ASPM (PCIe cap +0x04, +0x08, Link Capabilities/Control, the
// kernel's link/ attributes and ASPM policy) and of sysfs `resource` (drivers/pci/pci-sysfs.c resource_show), modelled on the live H200's file:
// GPU BAR0 16 MiB, BAR1 at line 2, BAR3 32 MiB at line 4, all 64-bit prefetchable (flags 0x14220c); a ConnectX's
// BAR0 32 MiB likewise; a bridge's prefetchable window (line 15, flags 0x102201) spanning what lies below it.
import type { GenDevice } from './sysfs-tree.js';
import { busOf } from './config-space.js';

export interface GenRegs extends GenAerRegs {
  /** GPUs: the GPUDirect window (resource line 2) in GiB (whole MiB: 0.25 is 256 MiB); 0 leaves it unassigned. Default 128 (H100 80 GB). */
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
  /** Device Capabilities Max_Payload_Size Supported, bytes; default 256 (GPUs, as the H200), 512 (NICs and bridges, as ConnectX-7 and switch ports). */
  mpsSupported?: number;
  /** Link Capabilities ASPM Support (bits 11:10: 1 L0s, 2 L1); default L1, none on NICs (ConnectX-7: "ASPM not supported"). */
  aspmSupport?: number;
  /** Link Control ASPM Control (bits 1:0); default 0, `ASPM Disabled` as every GPU and ConnectX-7 capture shows. */
  aspm?: number;
  /**
   * The `link/` ASPM attributes the kernel shows (drivers/pci/pcie/aspm.c: on a device below a downstream port, for
   * the states the link is capable of); null: no `link/` at all. Default: `l1_aspm` on GPUs and switch upstream
   * ports (both ends of their link support L1), 1 when `aspm` enables L1; nothing on NICs and on ports above a link.
   */
  linkAspm?: Partial<Record<'clkpm' | 'l0s_aspm' | 'l1_aspm' | 'l1_1_aspm' | 'l1_2_aspm', 0 | 1>> | null;
}

/** Node-wide files of the kernel's PCIe core. */
export interface GenKernelRegs {
  /** /sys/module/pcie_aspm/parameters/policy, as the live H200's kernel writes it; null: a kernel without ASPM support. */
  aspmPolicy?: string | null;
}

/** Kernel path → content for the node-wide files (GenKernelRegs). */
export function kernelFiles(n: GenKernelRegs): [string, string][] {
  const policy = n.aspmPolicy === undefined ? '[default] performance powersave powersupersave \n' : n.aspmPolicy;
  return policy === null ? [] : [['sys/module/pcie_aspm/parameters/policy', policy]];
}

/** A device's `link/` attribute files (see GenRegs.linkAspm), named relative to its directory. */
export function linkFiles(d: GenDevice): Record<string, string> {
  const def = d.kind === 'gpu' || d.kind === 'switch-up' ? { l1_aspm: ((d.aspm ?? 0) & 2 ? 1 : 0) as 0 | 1 } : null;
  const files = d.linkAspm === undefined ? def : d.linkAspm;
  return Object.fromEntries(Object.entries(files ?? {}).map(([k, v]) => [`link/${k}`, `${v}\n`]));
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
  // Device Capabilities: Max_Payload_Size Supported, Role-Based Error Reporting (bit 15, as every PCIe 1.1+ device);
  // Link Capabilities ASPM Support bits 11:10 (the caller wrote the rest); Link Control ASPM Control bits 1:0.
  b.writeUInt32LE((code(d.mpsSupported ?? (d.kind === 'gpu' ? 256 : 512)) | 0x8000) >>> 0, pcie + 0x04);
  b.writeUInt32LE((b.readUInt32LE(pcie + 0x0c) | ((d.aspmSupport ?? (d.kind === 'nic' ? 0 : 2)) << 10)) >>> 0, pcie + 0x0c);
  b.writeUInt16LE((d.aspm ?? 0) & 3, pcie + 0x10);
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
const baseOf = (d: GenDevice): bigint => 0x80000000000n + BigInt(busOf(d.bdf)) * 512n * GiB;

function bars(d: GenDevice): Line[] {
  const lines: Line[] = Array.from({ length: ENDPOINT_LINES }, () => ZERO);
  const x = baseOf(d);
  if (d.kind === 'gpu') {
    const size = (BigInt(Math.round((d.bar1GiB ?? 128) * 1024)) * GiB) / 1024n; // whole MiB: 0.25 is 256 MiB
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

/**
 * AER (ext. cap 0x0001, PCIe Base 6.3 §7.8.4) status registers and the kernel's counters. Defaults as a healthy HGX
 * node shows them: nothing recorded, UESvrt the spec's default (DLP SDES FCP RxOF MalfTLP UncorrIntErr fatal,
 * 0x00462030), CEMsk AdvNonFatalErr masked (0x2000), and the three aer_dev_* files the AER port driver gives
 * every device below a root port (aer_rootport_total_err_* on the root port too).
 */
export interface GenAer {
  ueSta?: number;
  ueMsk?: number;
  ueSvrt?: number;
  ceSta?: number;
  ceMsk?: number;
}

/** Counts per status bit; `null` for the whole field: no aer_dev_* files (a VM without a root port, pci=noaer). */
export interface GenAerCounters {
  cor?: Readonly<Record<number, number>>;
  nonfatal?: Readonly<Record<number, number>>;
  fatal?: Readonly<Record<number, number>>;
  /** Root ports: aer_rootport_total_err_{cor,nonfatal,fatal}. */
  rootport?: { cor: number; nonfatal: number; fatal: number };
  /** Label set: 'new' (5.x on, drivers/pci/pcie/aer.c: "RxErr") or 'old' (4.19: "Receiver Error"). */
  labels?: 'new' | 'old';
}

export interface GenAerRegs {
  aer?: GenAer;
  aerCounters?: GenAerCounters | null;
}

export function writeAer(b: Buffer, at: number, d: GenAerRegs): void {
  const a = d.aer ?? {};
  b.writeUInt32LE((a.ueSta ?? 0) >>> 0, at + 0x04);
  b.writeUInt32LE((a.ueMsk ?? 0) >>> 0, at + 0x08);
  b.writeUInt32LE((a.ueSvrt ?? 0x00462030) >>> 0, at + 0x0c);
  b.writeUInt32LE((a.ceSta ?? 0) >>> 0, at + 0x10);
  b.writeUInt32LE((a.ceMsk ?? 0x00002000) >>> 0, at + 0x14);
}

/** aer_correctable_error_string / aer_uncorrectable_error_string, by bit, in both kernels' wording. */
const COR: Readonly<Record<'new' | 'old', Readonly<Record<number, string>>>> = {
  new: { 0: 'RxErr', 6: 'BadTLP', 7: 'BadDLLP', 8: 'Rollover', 12: 'Timeout', 13: 'NonFatalErr', 14: 'CorrIntErr', 15: 'HeaderOF' },
  old: { 0: 'Receiver Error', 6: 'Bad TLP', 7: 'Bad DLLP', 8: 'RELAY_NUM Rollover', 12: 'Replay Timer Timeout', 13: 'Advisory Non-Fatal', 14: 'Corrected Internal Error', 15: 'Header Log Overflow' },
};
const UNCOR: Readonly<Record<'new' | 'old', Readonly<Record<number, string>>>> = {
  new: { 0: 'Undefined', 4: 'DLP', 5: 'SDES', 12: 'TLP', 13: 'FCP', 14: 'CmpltTO', 15: 'CmpltAbrt', 16: 'UnxCmplt', 17: 'RxOF', 18: 'MalfTLP', 19: 'ECRC', 20: 'UnsupReq', 21: 'ACSViol', 22: 'UncorrIntErr', 23: 'BlockedTLP', 24: 'AtomicOpBlocked', 25: 'TLPBlockedErr', 26: 'PoisonTLPBlocked' },
  old: { 0: 'Undefined', 4: 'Data Link Protocol', 5: 'Surprise Down Error', 12: 'Poisoned TLP', 13: 'Flow Control Protocol', 14: 'Completion Timeout', 15: 'Completer Abort', 16: 'Unexpected Completion', 17: 'Receiver Overflow', 18: 'Malformed TLP', 19: 'ECRC', 20: 'Unsupported Request', 21: 'ACS Violation', 22: 'Uncorrectable Internal Error', 23: 'MC Blocked TLP', 24: 'AtomicOp Egress Blocked', 25: 'TLP Prefix Blocked Error' },
};

/** One aer_dev_* file as aer_stats_dev_attr prints it: "%s %llu\n" per named bit, then the total line. */
export function aerCounterText(names: Readonly<Record<number, string>>, counts: Readonly<Record<number, number>>, total: string): string {
  const lines = Object.entries(names).map(([bit, label]) => `${label} ${counts[Number(bit)] ?? 0}\n`);
  return `${lines.join('')}${total} ${Object.values(counts).reduce((s, n) => s + n, 0)}\n`;
}

/** The kernel's AER statistics files of one device (none when aerCounters is null). */
export function aerFiles(d: GenAerRegs, rootPort: boolean): Record<string, string> {
  if (d.aerCounters === null) return {};
  const c = d.aerCounters ?? {};
  const set = c.labels ?? 'new';
  const out: Record<string, string> = {
    aer_dev_correctable: aerCounterText(COR[set], c.cor ?? {}, 'TOTAL_ERR_COR'),
    aer_dev_nonfatal: aerCounterText(UNCOR[set], c.nonfatal ?? {}, 'TOTAL_ERR_NONFATAL'),
    aer_dev_fatal: aerCounterText(UNCOR[set], c.fatal ?? {}, 'TOTAL_ERR_FATAL'),
  };
  if (rootPort) {
    const r = c.rootport ?? { cor: 0, nonfatal: 0, fatal: 0 };
    Object.assign(out, { aer_rootport_total_err_cor: `${r.cor}\n`, aer_rootport_total_err_nonfatal: `${r.nonfatal}\n`, aer_rootport_total_err_fatal: `${r.fatal}\n` });
  }
  return out;
}
