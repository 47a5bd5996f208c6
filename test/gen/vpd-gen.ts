// Test-side generator of a PCI function's `vpd` file (drivers/pci/vpd.c exposes the raw bytes): PCI Local Bus 3.0
// §6.4 / PCIe Base 6.3 §6.27 large resources: Identifier String (0x82), VPD-R (0x90) with PN, SN, V3 and RV, End (0x78).
export interface GenVpd {
  /** Identifier String: the board's product name. */
  name: string;
  pn?: string;
  /** Board serial number (SN): every function of one board shows the same. */
  sn?: string;
  /** V3, a vendor keyword; ConnectX-8 puts the adapter's UUID there (every PF and its DMA function share it). */
  v3?: string;
}

function large(tag: number, body: Buffer): Buffer {
  const head = Buffer.alloc(3);
  head.writeUInt8(tag, 0);
  head.writeUInt16LE(body.length, 1);
  return Buffer.concat([head, body]);
}

const keyword = (k: string, v: string): Buffer => Buffer.concat([Buffer.from(k, 'ascii'), Buffer.from([v.length]), Buffer.from(v, 'ascii')]);

export function vpdBytes(v: GenVpd): Buffer {
  const id = large(0x82, Buffer.from(v.name, 'ascii'));
  const kws = [['PN', v.pn], ['SN', v.sn], ['V3', v.v3]].filter((e): e is [string, string] => e[1] !== undefined).map(([k, x]) => keyword(k, x));
  // RV's one byte makes the sum of every byte from the start through it zero; it is the last byte of VPD-R here.
  const ro = Buffer.concat([...kws, keyword('RV', '\0')]);
  const sum = [...id, ...large(0x90, ro)].reduce((a, b) => (a + b) & 0xff, 0);
  ro.writeUInt8((0x100 - sum) & 0xff, ro.length - 1);
  return Buffer.concat([id, large(0x90, ro), Buffer.from([0x78])]);
}
