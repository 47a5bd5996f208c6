// Little-endian reads of a PCI config blob for the decoders (pci-config.ts), and the hex they print offsets in.
/** Little-endian reads; bytes beyond the blob read as all ones, like a configuration read nobody answers. */
export class ConfigReader {
  constructor(private readonly bytes: Uint8Array) {}
  get length(): number {
    return this.bytes.length;
  }
  has(offset: number, size: number): boolean {
    return offset >= 0 && offset + size <= this.bytes.length;
  }
  u8(offset: number): number {
    return this.bytes[offset] ?? 0xff;
  }
  u16(offset: number): number {
    return this.u8(offset) | (this.u8(offset + 1) << 8);
  }
  u32(offset: number): number {
    return (this.u16(offset) | (this.u16(offset + 2) << 16)) >>> 0;
  }
}

export function hex(n: number): string {
  return `0x${n.toString(16).padStart(2, '0')}`;
}
