// parsePciConfig answered once per distinct config space: the devices of a fleet's nodes (and a node's alike
// devices) hold byte-identical config spaces, and the decode is pure. Keyed by a 32-bit hash of the bytes, each hit
// checked byte for byte against a copy kept (never a view: it would keep a whole snapshot alive). Bounded: past
// MAX entries the memo starts again. The decoded config is shared between the devices it answers for (read-only).
import type { PciConfig } from '../model/pci.js';
import { parsePciConfig } from '../parsers/pci-config.js';

const MAX = 512;
const memo = new Map<number, { readonly bytes: Uint8Array; readonly cfg: PciConfig }[]>();
let size = 0;

/** FNV-1a over the bytes. */
function hash(b: Uint8Array): number {
  let h = 0x811c9dc5 ^ b.length;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

function same(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function parsePciConfigOnce(bytes: Uint8Array): PciConfig {
  const h = hash(bytes);
  const bucket = memo.get(h);
  const hit = bucket?.find((e) => same(e.bytes, bytes));
  if (hit) return hit.cfg;
  const cfg = parsePciConfig(bytes);
  if (size >= MAX) {
    memo.clear();
    size = 0;
  }
  const entry = { bytes: bytes.slice(), cfg };
  const b = memo.get(h);
  if (b) b.push(entry);
  else memo.set(h, [entry]);
  size++;
  return cfg;
}
