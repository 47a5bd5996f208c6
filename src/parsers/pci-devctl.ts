// Device Control, PCI Express capability +0x08 (PCIe Base 6.3 §7.5.3.4): error reporting enables, Relaxed Ordering,
// Max Payload Size, Max Read Request Size. Pure; what lspci -vvv prints as DevCtl.
import type { DevCtl } from '../model/pci.js';

/** Bits 7:5 and 14:12 (and Device Capabilities 2:0) encode 128 << n bytes; 6 and 7 are reserved (§7.5.3.4): null, never a size. */
export const payloadSize = (code: number): number | null => (code <= 5 ? 128 << code : null);
const size = payloadSize;

export function decodeDevCtl(reg: number): DevCtl {
  const bit = (n: number): boolean => (reg & (1 << n)) !== 0;
  return {
    corrErr: bit(0),
    nonFatalErr: bit(1),
    fatalErr: bit(2),
    unsupReq: bit(3),
    relaxedOrdering: bit(4),
    extTag: bit(8),
    noSnoop: bit(11),
    mps: size((reg >> 5) & 7),
    mrrs: size((reg >> 12) & 7),
  };
}

/** `RlxdOrd+ MaxPayload 256 bytes, MaxReadReq 4096 bytes`: the part of lspci's DevCtl a report needs. */
export function devCtlText(d: DevCtl): string {
  return `RlxdOrd${d.relaxedOrdering ? '+' : '-'} MaxPayload ${d.mps ?? '?'} bytes, MaxReadReq ${d.mrrs ?? '?'} bytes`;
}
