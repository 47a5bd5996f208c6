// Typed view of PCI configuration space (PCI Local Bus 3.0 §6, PCIe Base 6.0 §7.5.3, §7.7.8 ACS, §10.5.1 ATS).
import type { Fact } from './fact.js';

/** Link speed in GT/s as a number (2.5, 5, 8, 16, 32, 64); null when the encoding is reserved/unknown. */
export type GTs = number | null;

export interface AcsBits {
  readonly srcValid: boolean; // V  bit 0
  readonly transBlk: boolean; // B  bit 1
  readonly reqRedir: boolean; // R  bit 2
  readonly cmpltRedir: boolean; // C  bit 3
  readonly upstreamFwd: boolean; // U  bit 4
  readonly egressCtrl: boolean; // E  bit 5
  readonly directTrans: boolean; // T  bit 6
}

/** Device Control (PCIe cap +0x08, PCIe Base 6.3 §7.5.3.4); sizes in bytes, null for a reserved encoding. */
export interface DevCtl {
  readonly corrErr: boolean; // bit 0: Correctable Error Reporting Enable
  readonly nonFatalErr: boolean; // bit 1
  readonly fatalErr: boolean; // bit 2
  readonly unsupReq: boolean; // bit 3
  readonly relaxedOrdering: boolean; // bit 4
  readonly extTag: boolean; // bit 8
  readonly noSnoop: boolean; // bit 11
  readonly mps: number | null; // bits 7:5
  readonly mrrs: number | null; // bits 14:12
}

/** Link Control (PCIe cap +0x10, PCIe Base 6.3 §7.5.3.7): ASPM Control bits 1:0 (1 L0s, 2 L1) and Enable Clock PM (bit 8). */
export interface LnkCtl {
  readonly aspm: number;
  readonly clockPm: boolean;
}

/**
 * Device/Port Types with no Link registers: a Root Complex Integrated Endpoint (9) and a Root Complex Event Collector
 * (10) sit inside the Root Complex, with no link (PCIe Base 6.3 §7.5.3: Link Capabilities/Control/Status are reserved
 * for them). The kernel's pcie_cap_has_lnkctl (drivers/pci/access.c) leaves them out, so pcie_capability_read_*
 * reads their Link registers as 0, and lspci prints no LnkCap/LnkCtl/LnkSta for them (pciutils ls-caps.c). A VMM puts
 * a passed-through endpoint on a PCIe root bus as type 9 (QEMU's q35 pcie.0).
 */
export const linkless = (portType: number): boolean => portType === 9 || portType === 10;

export interface PcieCap {
  readonly offset: number;
  /** Device/Port Type, PCIe cap register bits 7:4: 0 endpoint, 1 legacy endpoint, 4 root port, 5 switch upstream, 6 switch downstream, 7 PCIe-to-PCI bridge, 8 PCI-to-PCIe bridge, 9 RC integrated endpoint, 10 RC event collector. */
  readonly portType: number;
  /** Link Capabilities (+0x0c), Status (+0x12), Control (+0x10): null for a function with no link (linkless). */
  readonly linkCap: { readonly speed: GTs; readonly width: number } | null;
  readonly linkStatus: { readonly speed: GTs; readonly width: number } | null;
  readonly devCtl: DevCtl;
  /** Device Capabilities (+0x04, §7.5.3.3) bits 2:0: Max_Payload_Size Supported in bytes; null for a reserved encoding. */
  readonly mpsSupported: number | null;
  readonly lnkCtl: LnkCtl | null;
  /** Capability Version (+0x02 bits 3:0, §7.5.3.2): 2 and later have Link Control 2 (+0x30), read only where asked. */
  readonly version: number;
}

export interface AcsCap {
  readonly offset: number;
  readonly cap: AcsBits;
  readonly ctl: AcsBits;
}

export interface AtsCap {
  readonly offset: number;
  readonly enabled: boolean;
  readonly stu: number;
}

/** AER extended capability 0x0001 (PCIe Base 6.3 §7.8.4): the sticky status registers and their masks/severity. */
export interface AerCap {
  readonly offset: number;
  readonly uncorStatus: number; // +0x04 Uncorrectable Error Status
  readonly uncorMask: number; // +0x08
  readonly uncorSeverity: number; // +0x0c: a set bit is fatal
  readonly corStatus: number; // +0x10 Correctable Error Status
  readonly corMask: number; // +0x14
}

/** Subsystem vendor and device IDs (what sysfs subsystem_vendor/subsystem_device print). */
export interface PciSubsystem {
  readonly vendor: number;
  readonly device: number;
}

export interface PciConfig {
  /** Bytes present in the blob: 64 for an unprivileged read, 256 for conventional PCI, 4096 for PCIe as root. */
  readonly length: number;
  readonly vendorId: number;
  readonly deviceId: number;
  /** 24-bit class code (e.g. 0x060400 bridge, 0x030200 3D controller). */
  readonly classCode: number;
  /** Header type without the multi-function bit: 0 endpoint, 1 PCI-PCI bridge. */
  readonly headerType: number;
  /** The header type's bit 7: the device has more functions than this one (§7.5.1.1.9; the kernel's `multifunction`). */
  readonly multiFunction: boolean;
  /** False when the capability list lies beyond what was readable (unprivileged 64-byte read). */
  readonly capsReadable: boolean;
  /** False when extended space (offset >= 0x100) is not present in the blob. */
  readonly extReadable: boolean;
  readonly capabilities: readonly { readonly id: number; readonly offset: number }[];
  readonly extCapabilities: readonly { readonly id: number; readonly version: number; readonly offset: number }[];
  /** Absent: the capability list was walked to its end without one; unknown: not readable, or the walk broke first. */
  readonly pcie: Fact<PcieCap>;
  readonly acs: Fact<AcsCap>;
  readonly ats: Fact<AtsCap>;
  readonly aer: Fact<AerCap>;
  /** Absent: a bridge without the Subsystem ID capability (the kernel shows 0x0000); see parsers/pci-subsystem.ts. */
  readonly subsystem: Fact<PciSubsystem>;
  /** Structural problems met while walking (capability loop, pointer past the end); the walk stops there. */
  readonly problems: readonly string[];
}

/**
 * A read that returned a header of all ones (what a configuration read returns when no function answers, PCIe Base
 * 6.3 §7.5.1.1.1: vendor, device and class code alike) from a function the kernel enumerated with a real vendor (its
 * sysfs `vendor`, cached at enumeration): the device stopped answering since (an NVIDIA GPU's "fallen off the bus",
 * a surprise link down before the kernel removes it). Not an SR-IOV Virtual Function, whose vendor and device IDs
 * read FFFFh by definition while its class code answers (the kernel copies the IDs from the PF: drivers/pci/iov.c);
 * not a zeroed read (0x0000): no evidence either way.
 */
export function silent(c: Pick<PciConfig, 'length' | 'vendorId' | 'deviceId' | 'classCode'>, sysfsVendor: number): boolean {
  return c.length >= 0x0c && c.vendorId === 0xffff && c.deviceId === 0xffff && c.classCode === 0xffffff && sysfsVendor !== 0xffff && sysfsVendor !== 0;
}
