// Test helper: turns config blobs into `lspci -x` dumps and back, runs the real lspci on them, reads its text.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DevCtl } from '../../src/model/pci.js';
import { scratchDir } from '../helpers/scratch.js';

export const LSPCI = '/usr/bin/lspci';
export const haveLspci = (): boolean => existsSync(LSPCI);

/** One device as lspci printed it: the decoded lines the parser is held to. */
export interface LspciDevice {
  readonly slot: string;
  readonly text: string;
  readonly lnkCap: { readonly speed: number | null; readonly width: number } | null;
  readonly lnkSta: { readonly speed: number | null; readonly width: number } | null;
  /** `LnkCtl2: Target Link Speed: 8GT/s` (pciutils ls-caps.c cap_express_link2), GT/s; null where lspci prints none. */
  readonly targetSpeed: number | null;
  readonly acsCap: string | null;
  readonly acsCtl: string | null;
  readonly atsCtl: { readonly enabled: boolean; readonly stu: number } | null;
  /** DevCtl's three lines, in both lspci wordings ("CorrErr+" and older "Report errors: Correctable+"). */
  readonly devCtl: DevCtl | null;
  /** `DevCap: MaxPayload N bytes` (Max_Payload_Size Supported). */
  readonly devCapMps: number | null;
  /** `LnkCtl: ASPM <what>;` (pciutils ls-caps.c) and ClockPM± on the line after it. */
  readonly lnkCtl: { readonly aspm: string; readonly clockPm: boolean } | null;
  /** UESta and CESta as registers, from the flags lspci prints (pciutils ls-ecaps.c cap_aer). */
  readonly aer: { readonly ue: number; readonly ce: number } | null;
  /** `Capabilities: [xx] name` lines below 0x100, in lspci's walk order. */
  readonly stdCaps: readonly { readonly offset: number; readonly name: string }[];
  /** `Capabilities: [xxx vN] name` lines at offset >= 0x100, in lspci's walk order. */
  readonly extCaps: readonly { readonly offset: number; readonly version: number; readonly name: string }[];
  /** `<access denied>`, `<chain looped>`, `<chain broken>` markers, as printed. */
  readonly markers: readonly string[];
}

const DEVICE_LINE = /^(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] /;

/** Splits lspci output (corpus text or oracle output) into devices; lines before the first device are dropped. */
export function splitDevices(text: string): LspciDevice[] {
  const blocks: string[][] = [];
  for (const line of text.split('\n')) {
    if (DEVICE_LINE.test(line)) blocks.push([line]);
    else blocks.at(-1)?.push(line);
  }
  return blocks.map((lines) => readDevice(lines));
}

function readDevice(lines: string[]): LspciDevice {
  const field = (name: string): string | null => {
    const hit = lines.find((l) => l.trimStart().startsWith(`${name}:`));
    return hit === undefined ? null : hit.trimStart().slice(name.length + 1).trim();
  };
  const link = (value: string | null) => {
    if (value === null) return null;
    const speed = /Speed ([\d.]+)GT\/s/.exec(value);
    const width = /Width x(\d+)/.exec(value);
    return { speed: speed?.[1] === undefined ? null : Number(speed[1]), width: Number(width?.[1] ?? NaN) };
  };
  const ats = field('ATSCtl');
  const atsMatch = ats === null ? null : /Enable([+-]), Smallest Translation Unit: ([0-9a-f]+)/.exec(ats);
  const extCaps = lines.flatMap((l) => {
    const m = /^\s+Capabilities: \[([0-9a-f]{3}) v(\d+)\] (.*)$/.exec(l);
    return m?.[1] !== undefined && m[2] !== undefined && m[3] !== undefined
      ? [{ offset: parseInt(m[1], 16), version: Number(m[2]), name: m[3] }]
      : [];
  });
  const stdCaps = lines.flatMap((l) => {
    const m = /^\s+Capabilities: \[([0-9a-f]{2})\] (.*)$/.exec(l);
    return m?.[1] !== undefined && m[2] !== undefined ? [{ offset: parseInt(m[1], 16), name: m[2] }] : [];
  });
  return {
    slot: (lines[0] ?? '').split(' ')[0] ?? '',
    text: lines.join('\n'),
    lnkCap: link(field('LnkCap')),
    lnkSta: link(field('LnkSta')),
    targetSpeed: Number(/^Target Link Speed: ([\d.]+)GT\/s/.exec(field('LnkCtl2') ?? '')?.[1] ?? NaN) || null,
    acsCap: field('ACSCap'),
    acsCtl: field('ACSCtl'),
    atsCtl: atsMatch?.[1] === undefined || atsMatch[2] === undefined
      ? null
      : { enabled: atsMatch[1] === '+', stu: parseInt(atsMatch[2], 16) },
    devCtl: devCtlOf(lines),
    devCapMps: Number(/MaxPayload (\d+) bytes/.exec(field('DevCap') ?? '')?.[1] ?? NaN) || null,
    lnkCtl: lnkCtlOf(lines),
    aer: aerOf(lines),
    stdCaps,
    extCaps,
    markers: lines.flatMap((l) => /<(access denied|chain looped|chain broken)>/.exec(l)?.[0] ?? []),
  };
}

function devCtlOf(lines: readonly string[]): DevCtl | null {
  const i = lines.findIndex((l) => /^\s+DevCtl:/.test(l));
  if (i < 0) return null;
  const text = lines.slice(i, i + 3).join(' ');
  const on = (...names: string[]): boolean => names.some((n) => new RegExp(`(?:^|\\s)${n}\\+`).test(text));
  const size = (name: string): number | null => Number(new RegExp(`${name} (\\d+) bytes`).exec(text)?.[1] ?? NaN) || null;
  return {
    corrErr: on('CorrErr', 'Correctable'), nonFatalErr: on('NonFatalErr', 'Non-Fatal'), fatalErr: on('FatalErr', 'Fatal'), unsupReq: on('UnsupReq', 'Unsupported'),
    relaxedOrdering: on('RlxdOrd'), extTag: on('ExtTag'), noSnoop: on('NoSnoop'), mps: size('MaxPayload'), mrrs: size('MaxReadReq'),
  };
}

function lnkCtlOf(lines: readonly string[]): { aspm: string; clockPm: boolean } | null {
  const i = lines.findIndex((l) => /^\s+LnkCtl:/.test(l));
  const aspm = i < 0 ? undefined : /LnkCtl:\s+ASPM ([^;]+);/.exec(lines[i]!)?.[1];
  if (aspm === undefined) return null;
  return { aspm, clockPm: /ClockPM\+/.test(`${lines[i]} ${lines[i + 1] ?? ''}`) };
}

/** Bit numbers of the flags lspci names (PCIe Base 6.3 §7.8.4.2 Uncorrectable, §7.8.4.5 Correctable Error Status). */
const UE_BITS: Readonly<Record<string, number>> = { DLP: 4, SDES: 5, TLP: 12, FCP: 13, CmpltTO: 14, CmpltAbrt: 15, UnxCmplt: 16, RxOF: 17, MalfTLP: 18, ECRC: 19, UnsupReq: 20, ACSViol: 21 };
const CE_BITS: Readonly<Record<string, number>> = { RxErr: 0, BadTLP: 6, BadDLLP: 7, Rollover: 8, Timeout: 12, AdvNonFatalErr: 13 };

function aerOf(lines: readonly string[]): { ue: number; ce: number } | null {
  const reg = (name: string, bits: Readonly<Record<string, number>>): number | null => {
    const line = lines.find((l) => l.trimStart().startsWith(`${name}:`));
    if (line === undefined) return null;
    return line.split(/\s+/).reduce((r, flag) => (flag.endsWith('+') && bits[flag.slice(0, -1)] !== undefined ? r | (1 << bits[flag.slice(0, -1)]!) : r), 0) >>> 0;
  };
  const [ue, ce] = [reg('UESta', UE_BITS), reg('CESta', CE_BITS)];
  return ue === null || ce === null ? null : { ue, ce };
}

/** UEMsk and UESvrt as registers (only the bits lspci names), and its DevCtl error-reporting flags as printed. */
export function aerMasksOf(deviceText: string): { msk: number; svrt: number } | null {
  const lines = deviceText.split('\n');
  const reg = (name: string): number | null => {
    const line = lines.find((l) => l.trimStart().startsWith(`${name}:`));
    return line === undefined ? null : line.split(/\s+/).reduce((r, flag) => (flag.endsWith('+') && UE_BITS[flag.slice(0, -1)] !== undefined ? r | (1 << UE_BITS[flag.slice(0, -1)]!) : r), 0) >>> 0;
  };
  const [msk, svrt] = [reg('UEMsk'), reg('UESvrt')];
  return msk === null || svrt === null ? null : { msk, svrt };
}

/** lspci's flag names for the UESta/CESta bits the decoder sets (what pcie-aer's messages name). */
export function aerFlagsOf(deviceText: string, name: 'UESta' | 'CESta'): string[] {
  const line = deviceText.split('\n').find((l) => l.trimStart().startsWith(`${name}:`));
  return line === undefined ? [] : line.trim().split(/\s+/).slice(1).filter((f) => f.endsWith('+')).map((f) => f.slice(0, -1));
}

/** The bits lspci names, as a mask. */
export const LSPCI_UE_MASK = Object.values(UE_BITS).reduce((m, b) => m | (1 << b), 0) >>> 0;

/** The decoder's AER status as lspci prints it: only the bits lspci names. */
export function aerSeen(aer: { readonly uncorStatus: number; readonly corStatus: number } | null): { ue: number; ce: number } | null {
  const mask = (bits: Readonly<Record<string, number>>): number => Object.values(bits).reduce((m, b) => m | (1 << b), 0);
  return aer === null ? null : { ue: (aer.uncorStatus & mask(UE_BITS)) >>> 0, ce: (aer.corStatus & mask(CE_BITS)) >>> 0 };
}

/** Bytes of the `xx: .. .. ..` hex lines in one device's text; offsets must be contiguous from 0. */
export function hexDumpBytes(deviceText: string): Uint8Array {
  const out: number[] = [];
  for (const line of deviceText.split('\n')) {
    const m = /^([0-9a-f]{2,3}): ((?:[0-9a-f]{2} ){15}[0-9a-f]{2})\s*$/.exec(line);
    if (m?.[1] === undefined || m[2] === undefined) continue;
    if (parseInt(m[1], 16) !== out.length) throw new Error(`hex dump line ${m[1]} out of order`);
    out.push(...m[2].split(' ').map((h) => parseInt(h, 16)));
  }
  return Uint8Array.from(out);
}

/** The blob as `lspci -xxxx` would print it: the input format of `lspci -F`. */
export function toHexDump(bytes: Uint8Array, slot = '00:00.0'): string {
  const lines = [`${slot} Non-VGA unclassified device: gdrgate test blob`];
  for (let at = 0; at < bytes.length; at += 16) {
    const row = Array.from(bytes.subarray(at, at + 16), (b) => b.toString(16).padStart(2, '0'));
    lines.push(`${at.toString(16).padStart(at < 0x100 ? 2 : 3, '0')}: ${row.join(' ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Runs the real `lspci -F dump -vvv` on one blob and returns what it decoded. */
export function lspciDecode(bytes: Uint8Array, slot = '00:00.0'): LspciDevice {
  const dir = scratchDir('gdrgate-lspci-');
  try {
    const file = join(dir, 'dump.txt');
    writeFileSync(file, toHexDump(bytes, slot));
    const out = execFileSync(LSPCI, ['-F', file, '-vvv'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const [device, ...rest] = splitDevices(out);
    if (device === undefined || rest.length > 0) throw new Error(`lspci printed ${rest.length + 1} devices:\n${out}`);
    return device;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Extended capability IDs for the names lspci prints (pciutils ls-ecaps.c; `#xx` is lspci's hex for unknown IDs). */
const EXT_IDS: Readonly<Record<string, number>> = {
  Null: 0x0000,
  'Advanced Error Reporting': 0x0001,
  'Virtual Channel': 0x0002,
  'Device Serial Number': 0x0003,
  'Power Budgeting': 0x0004,
  'Vendor Specific Information': 0x000b,
  'Access Control Services': 0x000d,
  'Address Translation Service (ATS)': 0x000f,
  Multicast: 0x0012,
  'Latency Tolerance Reporting': 0x0018,
  'Secondary PCI Express': 0x0019,
};

function extId(name: string): number {
  const hash = /^#([0-9a-f]+)/.exec(name)?.[1];
  if (hash !== undefined) return parseInt(hash, 16);
  const known = Object.keys(EXT_IDS).find((k) => name.startsWith(k));
  if (known === undefined) throw new Error(`no extended capability ID known for "${name}"`);
  return EXT_IDS[known] ?? 0;
}

const acsReg = (line: string): number =>
  line.split(/\s+/).reduce((reg, flag, bit) => (flag.endsWith('+') ? reg | (1 << bit) : reg), 0);

/**
 * Rebuilds extended space for a device whose text lists it but whose dump is only 256 bytes:
 * the real 256 bytes, then every `Capabilities: [xxx vN]` header chained in the printed order, and the
 * register values the text states exactly (ACSCap/ACSCtl bits 6:0, DSN, VSEC header). Nothing else is set.
 */
export function reassembleExtended(device: LspciDevice): Uint8Array {
  const blob = new Uint8Array(4096);
  blob.set(hexDumpBytes(device.text).subarray(0, 256));
  const view = new DataView(blob.buffer);
  device.extCaps.forEach((cap, i) => {
    const next = device.extCaps[i + 1]?.offset ?? 0;
    view.setUint32(cap.offset, (extId(cap.name) | (cap.version << 16) | (next << 20)) >>> 0, true);
    const dsn = /^Device Serial Number ((?:[0-9a-f]{2}-){7}[0-9a-f]{2})$/.exec(cap.name)?.[1];
    if (dsn !== undefined) dsn.split('-').reverse().forEach((b, j) => view.setUint8(cap.offset + 4 + j, parseInt(b, 16)));
    const vsec = /^Vendor Specific Information: ID=([0-9a-f]{4}) Rev=(\d+) Len=([0-9a-f]{3})/.exec(cap.name);
    if (vsec?.[1] !== undefined && vsec[2] !== undefined && vsec[3] !== undefined) {
      const reg = parseInt(vsec[1], 16) | (Number(vsec[2]) << 16) | (parseInt(vsec[3], 16) << 20);
      view.setUint32(cap.offset + 4, reg >>> 0, true);
    }
    if (extId(cap.name) === 0x000d && device.acsCap !== null && device.acsCtl !== null) {
      view.setUint16(cap.offset + 4, acsReg(device.acsCap), true);
      view.setUint16(cap.offset + 6, acsReg(device.acsCtl), true);
    }
  });
  return blob;
}
