// Pure decoder of one PCI configuration-space blob (sysfs `config`): PCIe link, ACS and ATS state.
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import { type AcsBits, type AcsCap, type AerCap, type AtsCap, type GTs, linkless, type PciConfig, type PcieCap } from '../model/pci.js';
import { ConfigReader, hex } from './config-reader.js';
import { decodeDevCtl, flags, payloadSize } from './pci-devctl.js';
import { CAP_ID_SSVID, decodeSubsystem } from './pci-subsystem.js';

/** Predefined header (PCI Local Bus 3.0 §6.1); all an unprivileged sysfs read returns. */
const HEADER_BYTES = 0x40;
/** PCI-compatible space; PCIe extended capabilities start here (PCIe Base 6.3 §7.6.1). */
const EXT_START = 0x100;
/** (256 - 64) / 4: a longer standard list can only be a loop. */
const MAX_CAPS = 48;
/** (4096 - 256) / 4: a longer extended list can only be a loop. */
const MAX_EXT_CAPS = 960;

const CAP_ID_PCIE = 0x10; // PCIe Base 6.3 §7.5.3.1
const EXT_ID_ACS = 0x000d; // PCIe Base 6.3 §7.7.11.1
const EXT_ID_ATS = 0x000f; // PCIe Base 6.3 §10.5.1.1
const EXT_ID_AER = 0x0001; // PCIe Base 6.3 §7.8.4.1
/** AER registers read: header, Uncorrectable Status/Mask/Severity, Correctable Status/Mask (§7.8.4.2-7). */
const AER_BYTES = 0x18;

/** Link speed encodings 1..6 (PCIe Base 6.3 §7.5.3.6 Max Link Speed, §7.5.3.8 Current Link Speed). */
const SPEEDS: readonly number[] = [2.5, 5, 8, 16, 32, 64];

/** ACS Capability/Control bits 0..6 in register order, with lspci's names (PCIe Base 6.3 §7.7.11.2-3). */
const ACS_FIELDS = [
  ['srcValid', 'SrcValid'],
  ['transBlk', 'TransBlk'],
  ['reqRedir', 'ReqRedir'],
  ['cmpltRedir', 'CmpltRedir'],
  ['upstreamFwd', 'UpstreamFwd'],
  ['egressCtrl', 'EgressCtrl'],
  ['directTrans', 'DirectTrans'],
] as const satisfies readonly (readonly [keyof AcsBits, string])[];

/** Controls that send peer-to-peer requests/completions up to the root complex instead of across the switch. */
const REDIRECTING: ReadonlySet<keyof AcsBits> = new Set(['reqRedir', 'cmpltRedir', 'egressCtrl']);

/** Decodes a sysfs `config` blob; never throws: structural trouble lands in `problems`. */
export function parsePciConfig(bytes: Uint8Array): PciConfig {
  const cfg = new ConfigReader(bytes);
  const problems: string[] = [];
  const header = {
    length: bytes.length,
    vendorId: cfg.u16(0x00),
    deviceId: cfg.u16(0x02),
    classCode: (cfg.u8(0x0b) << 16) | (cfg.u8(0x0a) << 8) | cfg.u8(0x09),
    headerType: cfg.u8(0x0e) & 0x7f,
    multiFunction: (cfg.u8(0x0e) & 0x80) !== 0, // §7.5.1.1.9
  };
  const unreadable = (why: string): Omit<PciConfig, 'problems'> => ({
    ...header,
    capsReadable: false,
    extReadable: false,
    capabilities: [],
    extCapabilities: [],
    pcie: unknown(why),
    acs: unknown(why),
    ats: unknown(why),
    aer: unknown(why),
    subsystem: decodeSubsystem(cfg, header.headerType, null),
  });
  if (bytes.length < HEADER_BYTES) {
    problems.push(`config blob is ${bytes.length} bytes, shorter than the ${HEADER_BYTES}-byte header`);
    return { ...unreadable(problems[0]!), problems };
  }
  // An all-ones Vendor ID is what a read returns when no function answers (§7.5.1.1.1); 0x0000 is no vendor's either
  // (the kernel's probe refuses both: drivers/pci/probe.c pci_bus_generic_read_dev_vendor_id): a zeroed read.
  // An SR-IOV VF's IDs read FFFFh by definition while its class code answers (PCIe Base 6.3 §9.3.4.1.1-2): said so.
  if (header.vendorId === 0xffff || header.vendorId === 0) {
    const vf = header.vendorId === 0xffff && header.deviceId === 0xffff && header.classCode !== 0xffffff && header.headerType === 0;
    const why = vf ? 'an SR-IOV Virtual Function\'s header (IDs read FFFFh by definition): not judged from it, its Physical Function holds these settings' : header.vendorId ? 'no function answered the configuration read' : 'no function\'s header (a zeroed read)';
    problems.push(`vendor ID reads 0x${header.vendorId.toString(16).padStart(4, '0')}: ${why}`);
    return { ...unreadable(problems[0]!), subsystem: unknown(problems[0]!), problems };
  }
  // A 64-byte blob means "not readable", never "no capability": the list lies beyond it.
  if (bytes.length === HEADER_BYTES) return { ...unreadable(`${HEADER_BYTES}-byte config space: capabilities need a read as root`), problems };

  const std = walkCapabilities(cfg, header.headerType, problems);
  // Not found is "absent" only when the list was walked to its end; a broken walk may have hidden it.
  const stdBroken = problems[0];
  const pcie = std.pcieAt !== null ? readPcie(cfg, std.pcieAt, problems) : stdBroken !== undefined ? unknown(stdBroken) : ABSENT;
  const extReadable = bytes.length > EXT_START;
  const beyond = unknown(`${bytes.length}-byte config space: extended capabilities need a read as root`);
  const ext = extReadable ? walkExtCapabilities(cfg, problems) : { caps: [], acs: beyond, ats: beyond, aer: beyond };
  return {
    ...header,
    capsReadable: true,
    ...{ extReadable, capabilities: std.caps, extCapabilities: ext.caps },
    ...{ pcie, acs: ext.acs, ats: ext.ats, aer: ext.aer, subsystem: decodeSubsystem(cfg, header.headerType, std.caps, stdBroken), problems },
  };
}

/** What sysfs `config` holds for a PCIe function read as root (PCI_CFG_SPACE_EXP_SIZE). */
const CONFIG_BYTES = 0x1000;

/**
 * The bytes of a config blob that parsePciConfig looks at, read part by part through `at(offset, length)` (fewer
 * bytes back at the end of the file), each register once: on a live node every dword is one configuration access
 * (drivers/pci/pci-sysfs.c pci_read_config), ~30 µs each where a VM traps it. Of the header: 0x00-0x0f, a type 0
 * header's Subsystem IDs, the capability pointer; each capability's first dword, and the registers behind it that
 * the parser reads (PCI Express, Subsystem ID, ACS, ATS, AER). The rest stays zero: the result parses as the whole
 * file's first 4 KiB. A byte each at 0x40, 0x100 and 0xfff tells a 64-byte (unprivileged), a 256-byte and a 4 KiB
 * config apart; another length (a truncated capture) is read whole.
 */
export function sparseConfig(at: (offset: number, length: number) => Uint8Array): Uint8Array {
  if (at(HEADER_BYTES, 1).length === 0) return at(0, HEADER_BYTES); // 64 bytes or fewer: all there is
  const ext = at(EXT_START, 1).length === 1;
  if (at(ext ? CONFIG_BYTES - 1 : EXT_START - 1, 1).length === 0) return at(0, CONFIG_BYTES);
  const out = new Uint8Array(ext ? CONFIG_BYTES : EXT_START);
  const put = (offset: number, length: number): Uint8Array => { const part = at(offset, length); out.set(part, offset); return part; };
  const headerType = put(0, 0x10)[0x0e]! & 0x7f;
  if (headerType === 0) put(0x2c, 4); // Subsystem Vendor ID and Subsystem ID (pci-subsystem.ts)
  const pointer = headerType === 2 ? 0x14 : 0x34;
  put(pointer, 1);
  const hdr = new ConfigReader(out);
  if ((hdr.u16(0x06) & 0x10) !== 0) {
    const seen = new Set<number>();
    let off = hdr.u8(pointer) & ~3;
    while (off >= HEADER_BYTES && off < EXT_START && !seen.has(off) && seen.size < MAX_CAPS) {
      seen.add(off);
      const part = put(off, 4);
      if (part[0] === CAP_ID_PCIE) put(off + 4, 0x10);
      if (part[0] === CAP_ID_SSVID) put(off + 4, 4);
      if (part[0] === 0xff) break;
      off = (part[1] ?? 0) & ~3;
    }
  }
  if (!ext) return out;
  const seen = new Set<number>();
  for (let off = EXT_START; off >= EXT_START && !seen.has(off) && seen.size < MAX_EXT_CAPS; ) {
    seen.add(off);
    const part = put(off, 4);
    const word = part.length < 4 ? 0 : new ConfigReader(part).u32(0);
    const id = word & 0xffff;
    if (id === EXT_ID_ACS || id === EXT_ID_ATS) put(off + 4, 4);
    if (id === EXT_ID_AER) put(off + 4, AER_BYTES - 4);
    if (word === 0 || word === 0xffffffff) break;
    off = (word >>> 20) & 0xffc;
  }
  return out;
}

/** Renders ACS bits the way `lspci -vvv` prints ACSCap/ACSCtl. */
export function formatAcs(bits: AcsBits): string {
  return ACS_FIELDS.map(([key, name]) => `${name}${bits[key] ? '+' : '-'}`).join(' ');
}

/** Names of the set ACS controls that redirect peer traffic to the root complex (ReqRedir, CmpltRedir, EgressCtrl). */
export function redirectBits(bits: AcsBits): string[] {
  return ACS_FIELDS.filter(([key]) => REDIRECTING.has(key) && bits[key]).map(([, name]) => name);
}

type Cap = { readonly id: number; readonly offset: number };
type ExtCap = Cap & { readonly version: number };

/** Standard capability list (PCI Local Bus 3.0 §6.7; PCIe Base 6.3 §7.5.1.1.4 Status bit 4, §7.5.1.1.11 pointer). */
function walkCapabilities(cfg: ConfigReader, headerType: number, problems: string[]): { caps: Cap[]; pcieAt: number | null } {
  const caps: Cap[] = [];
  let pcieAt: number | null = null;
  if ((cfg.u16(0x06) & 0x10) === 0) return { caps, pcieAt };
  const seen = new Set<number>();
  // CardBus bridges (header type 2) keep the pointer at 0x14 (PC Card Standard); everyone else at 0x34.
  let at = cfg.u8(headerType === 2 ? 0x14 : 0x34) & ~3;
  while (at !== 0) {
    if (at < HEADER_BYTES) {
      problems.push(`capability pointer ${hex(at)} points into the ${HEADER_BYTES}-byte header`);
      break;
    }
    if (!cfg.has(at, 2)) {
      problems.push(`capability pointer ${hex(at)} is past the end of the ${cfg.length}-byte blob`);
      break;
    }
    if (seen.has(at) || seen.size >= MAX_CAPS) {
      problems.push(`capability list loops back to ${hex(at)}`);
      break;
    }
    seen.add(at);
    const id = cfg.u8(at);
    if (id === 0xff) {
      problems.push(`capability at ${hex(at)} has ID 0xff: the list is broken`);
      break;
    }
    caps.push({ id, offset: at });
    if (id === CAP_ID_PCIE && pcieAt === null) pcieAt = at;
    at = cfg.u8(at + 1) & ~3;
  }
  return { caps, pcieAt };
}

/** PCI Express Capability structure (PCIe Base 6.3 §7.5.3): port type, Device Capabilities/Control, Link Capabilities/Control/Status. */
function readPcie(cfg: ConfigReader, at: number, problems: string[]): Fact<PcieCap> {
  if (!cfg.has(at, 0x14)) return cutOff('PCI Express', at, cfg, problems);
  const [linkCap, linkStatus, portType] = [cfg.u32(at + 0x0c), cfg.u16(at + 0x12), (cfg.u16(at + 0x02) >> 4) & 0xf]; // §7.5.3.6, .8, .2
  const link = !linkless(portType); // an RC integrated endpoint or event collector: Link registers reserved, not decoded
  return present({
    offset: at,
    portType,
    linkCap: link ? { speed: speed(linkCap & 0xf), width: (linkCap >> 4) & 0x3f } : null,
    linkStatus: link ? { speed: speed(linkStatus & 0xf), width: (linkStatus >> 4) & 0x3f } : null,
    devCtl: decodeDevCtl(cfg.u16(at + 0x08)), // §7.5.3.4
    mpsSupported: payloadSize(cfg.u32(at + 0x04) & 7), // §7.5.3.3 Device Capabilities
    lnkCtl: link ? { aspm: cfg.u16(at + 0x10) & 3, clockPm: (cfg.u16(at + 0x10) & 0x100) !== 0 } : null, // §7.5.3.7 Link Control
    version: cfg.u16(at + 0x02) & 0xf,
  });
}

/** A capability whose registers run past the blob: recorded, and the fact it holds is unknown. */
function cutOff(name: string, at: number, cfg: ConfigReader, problems: string[]): Fact<never> {
  const why = `${name} capability at ${hex(at)} is cut off by the end of the ${cfg.length}-byte blob`;
  problems.push(why);
  return unknown(why);
}

interface ExtWalk {
  caps: ExtCap[];
  acs: Fact<AcsCap>;
  ats: Fact<AtsCap>;
  aer: Fact<AerCap>;
}

/** Extended capability list from 0x100 (PCIe Base 6.3 §7.6.3 header: ID 15:0, version 19:16, next 31:20). */
function walkExtCapabilities(cfg: ConfigReader, problems: string[]): ExtWalk {
  const walk: ExtWalk = { caps: [], acs: ABSENT, ats: ABSENT, aer: ABSENT };
  const before = problems.length;
  const seen = new Set<number>();
  let at = EXT_START;
  for (;;) {
    if (!cfg.has(at, 4)) {
      problems.push(`extended capability pointer ${hex(at)} is past the end of the ${cfg.length}-byte blob`);
      break;
    }
    if (seen.has(at) || seen.size >= MAX_EXT_CAPS) {
      problems.push(`extended capability list loops back to ${hex(at)}`);
      break;
    }
    seen.add(at);
    const word = cfg.u32(at);
    // A zero header ends the list (§7.6.3). All ones is no answer: a config file is longer than 256 bytes only where 0x100
    // answered when the kernel found the function (probe.c pci_cfg_space_size_ext): it stopped answering since.
    if (word === 0) break;
    if (word === 0xffffffff) {
      problems.push(`extended capability ${at === EXT_START ? 'header at 0x100' : `at ${hex(at)}`} reads all ones: the function does not answer`);
      break;
    }
    const id = word & 0xffff;
    walk.caps.push({ id, version: (word >>> 16) & 0xf, offset: at });
    if (id === EXT_ID_ACS && walk.acs.state === 'absent') walk.acs = readAcs(cfg, at, problems);
    if (id === EXT_ID_ATS && walk.ats.state === 'absent') walk.ats = readAts(cfg, at, problems);
    if (id === EXT_ID_AER && walk.aer.state === 'absent') walk.aer = readAer(cfg, at, problems);
    const next = (word >>> 20) & 0xffc;
    if (next === 0) break;
    if (next < EXT_START) {
      problems.push(`extended capability at ${hex(at)} points back into standard space (${hex(next)})`);
      break;
    }
    at = next;
  }
  // A list that broke before its end may hide the capability: not found is then unknown, with the parser's problem.
  const broke = problems[before];
  if (broke !== undefined) {
    if (walk.acs.state === 'absent') walk.acs = unknown(broke);
    if (walk.ats.state === 'absent') walk.ats = unknown(broke);
    if (walk.aer.state === 'absent') walk.aer = unknown(broke);
  }
  return walk;
}

/** ACS Extended Capability: Capability register +4, Control register +6 (PCIe Base 6.3 §7.7.11.2, §7.7.11.3). */
function readAcs(cfg: ConfigReader, at: number, problems: string[]): Fact<AcsCap> {
  if (!cfg.has(at, 8)) return cutOff('ACS', at, cfg, problems);
  return present({ offset: at, cap: acsBits(cfg.u16(at + 4)), ctl: acsBits(cfg.u16(at + 6)) });
}

/** ATS Control register +6: bit 15 Enable, bits 4:0 Smallest Translation Unit (PCIe Base 6.3 §10.5.1.3). */
function readAts(cfg: ConfigReader, at: number, problems: string[]): Fact<AtsCap> {
  if (!cfg.has(at, 8)) return cutOff('ATS', at, cfg, problems);
  const ctl = cfg.u16(at + 6);
  return present({ offset: at, enabled: (ctl & 0x8000) !== 0, stu: ctl & 0x1f });
}

/** AER status registers are sticky (RW1CS, §7.8.4.2, §7.8.4.5): what was seen since the last clear, even by firmware. */
function readAer(cfg: ConfigReader, at: number, problems: string[]): Fact<AerCap> {
  if (!cfg.has(at, AER_BYTES)) return cutOff('AER', at, cfg, problems);
  const r = (o: number): number => cfg.u32(at + o);
  return present({ offset: at, uncorStatus: r(0x04), uncorMask: r(0x08), uncorSeverity: r(0x0c), corStatus: r(0x10), corMask: r(0x14) });
}

/** ACS Capability and Control share one layout (§7.7.11.2, §7.7.11.3): V B R C U E T, bits 0 to 6. */
const ACS_BITS: Readonly<Record<keyof AcsBits, number>> = { srcValid: 0, transBlk: 1, reqRedir: 2, cmpltRedir: 3, upstreamFwd: 4, egressCtrl: 5, directTrans: 6 };
const acsBits = (reg: number): AcsBits => flags(reg, ACS_BITS);

/** Link Control 2 (§7.5.3.19) bits 3:0, Target Link Speed: the fastest the port lets its link train, in GT/s. */
export const targetLinkSpeed = (lnkCtl2: number): GTs => speed(lnkCtl2 & 0xf);

function speed(code: number): GTs {
  return SPEEDS[code - 1] ?? null;
}
