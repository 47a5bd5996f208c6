// parsePciConfig answered once per distinct config space: the devices of a fleet's nodes (and a node's alike
// devices) hold byte-identical config spaces, and the decode is pure. Keyed by a 32-bit hash of a quarter of the
// bytes (4 of every 16: cheap next to the decode), each hit checked byte for byte (native compare) against a copy
// kept (never a view: it would keep a whole snapshot alive). Bounded (memo.ts): past
// 512 hashes the memo starts again, and a hash keeps
// at most 2 entries (4 MiB at most). The decoded config is shared between the devices it answers for (read-only).
import type { PciConfig } from '../model/pci.js';
import { parsePciConfig } from '../parsers/pci-config.js';
import { BoundedMemo } from './memo.js';

/** Entries a hash may hold: more are collisions made on purpose, parsed without being kept. */
const BUCKET = 2;
const memo = new BoundedMemo<number, { readonly bytes: Uint8Array; readonly cfg: PciConfig }[]>(512);

/** FNV-1a over the first 4 bytes of every 16 (and the length). */
function hash(b: Uint8Array): number {
  let h = Math.imul(0x811c9dc5 ^ b.length, 0x01000193);
  for (let i = 0; i + 3 < b.length; i += 16) h = Math.imul(h ^ (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)), 0x01000193);
  return h >>> 0;
}

const view = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
const same = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && view(a).equals(view(b));

export function parsePciConfigOnce(bytes: Uint8Array): PciConfig {
  const bucket = memo.get(hash(bytes), () => []);
  const hit = bucket.find((e) => same(e.bytes, bytes));
  if (hit) return hit.cfg;
  const cfg = parsePciConfig(bytes);
  if (bucket.length < BUCKET) bucket.push({ bytes: bytes.slice(), cfg });
  return cfg;
}
