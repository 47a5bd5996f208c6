// A PCI function's Vital Product Data as sysfs `vpd` shows it (drivers/pci/vpd.c: the raw bytes), PCIe Base 6.3
// §6.27: resource data items, each a small one (tag byte 0xxx xyyy: name xxxx, length yyy) or a large one (tag byte
// 1xxx xxxx, a 16-bit little-endian length); the Identifier String (large 0x02), VPD-R (large 0x10) holding
// keywords (two ASCII characters, a length byte, the data), VPD-W (large 0x11), End (small 0x0f). Pure.

export interface Vpd {
  /** The Identifier String: the product's name. */
  readonly name: string | null;
  /** VPD-R keywords as read (ASCII), the first of each name. */
  readonly ro: ReadonlyMap<string, string>;
}

const LARGE = 0x80;
const ID_STRING = 0x02;
const VPD_R = 0x10;
const END = 0x0f;

const ascii = (b: Uint8Array): string | null => (b.every((c) => c < 0x80) ? String.fromCharCode(...b) : null);

/**
 * The VPD in `bytes`; null when it holds no item that reads whole (an empty file: the function has no VPD, or a read
 * the device did not answer). Reading stops at End, at an item longer than what is left, or at a tag of neither
 * kind; what came before it stands. A keyword whose data is not ASCII is left out.
 */
export function parseVpd(bytes: Uint8Array): Vpd | null {
  let name: string | null = null;
  const ro = new Map<string, string>();
  let at = 0;
  let items = 0;
  while (at < bytes.length) {
    const tag = bytes[at]!;
    let kind: number;
    let len: number;
    let body: number;
    if (tag & LARGE) {
      if (at + 3 > bytes.length) break;
      kind = tag & 0x7f;
      len = bytes[at + 1]! | (bytes[at + 2]! << 8);
      body = at + 3;
    } else {
      kind = (tag >> 3) & 0x0f;
      len = tag & 0x07;
      body = at + 1;
      if (kind === END) break;
    }
    if (body + len > bytes.length) break;
    const data = bytes.subarray(body, body + len);
    items++;
    if (tag & LARGE && kind === ID_STRING) name = ascii(data)?.trim() ?? null;
    if (tag & LARGE && kind === VPD_R) {
      for (let k = 0; k + 3 <= data.length; ) {
        const n = data[k + 2]!;
        if (k + 3 + n > data.length) break;
        const key = ascii(data.subarray(k, k + 2));
        const value = ascii(data.subarray(k + 3, k + 3 + n));
        if (key !== null && value !== null && !ro.has(key)) ro.set(key, value);
        k += 3 + n;
      }
    }
    at = body + len;
  }
  return items === 0 ? null : { name, ro };
}
