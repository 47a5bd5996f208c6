// Device Control, PCI Express capability +0x08 (PCIe Base 6.3 §7.5.3.4): error reporting enables, Relaxed Ordering,
// Max Payload Size, Max Read Request Size. Pure; what lspci -vvv prints as DevCtl.
import type { DevCtl } from '../model/pci.js';

/** Bits 7:5 and 14:12 (and Device Capabilities 2:0) encode 128 << n bytes; 6 and 7 are reserved (§7.5.3.4): null, never a size. */
export const payloadSize = (code: number): number | null => (code <= 5 ? 128 << code : null);
const size = payloadSize;

/** A register's one-bit fields, each named with its bit number: the table is the register's layout, said once. */
export function flags<K extends string>(reg: number, bits: Readonly<Record<K, number>>): Record<K, boolean> {
  const out = {} as Record<K, boolean>;
  for (const k of Object.keys(bits) as K[]) out[k] = (reg & (1 << bits[k])) !== 0;
  return out;
}

/** Device Control's enables (§7.5.3.4): error reporting 3:0, Relaxed Ordering 4, Extended Tag 8, No Snoop 11. */
const DEVCTL_BITS: Readonly<Record<Exclude<keyof DevCtl, 'mps' | 'mrrs'>, number>> = {
  corrErr: 0,
  nonFatalErr: 1,
  fatalErr: 2,
  unsupReq: 3,
  relaxedOrdering: 4,
  extTag: 8,
  noSnoop: 11,
};

export function decodeDevCtl(reg: number): DevCtl {
  return { ...flags(reg, DEVCTL_BITS), mps: size((reg >> 5) & 7), mrrs: size((reg >> 12) & 7) };
}

/** `RlxdOrd+ MaxPayload 256 bytes, MaxReadReq 4096 bytes`: the part of lspci's DevCtl a report needs. */
export function devCtlText(d: DevCtl): string {
  return `RlxdOrd${d.relaxedOrdering ? '+' : '-'} MaxPayload ${d.mps ?? '?'} bytes, MaxReadReq ${d.mrrs ?? '?'} bytes`;
}
