// sparseConfig reads a config blob part by part (the header, each standard capability's first dword, then
// each extended capability's header and the dword after it) and must parse exactly as the whole blob does:
// on every real blob we have, on the generated 8-GPU tree's bridges, GPUs and NICs, and on thousands of
// seeded mutations of them (broken pointers, loops, all-ones, truncations, in both capability lists).
// It must also read far less than the whole 4 KiB, counted as the kernel counts configuration accesses.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';

import path from 'node:path';
import { parsePciConfig, sparseConfig } from '../../src/parsers/pci-config.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { node as HGX } from '../gen/topologies/sglang30401-hgx-h100.js';
import { H200, REPO } from '../helpers/paths.js';
import { mulberry32 } from '../helpers/seeded.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';

/**
 * The configuration accesses the kernel makes for one read of sysfs `config` (drivers/pci/pci-sysfs.c
 * pci_read_config): a byte to reach an even offset, a word to reach a dword, dwords, then a word and a byte.
 */
export function accesses(offset: number, length: number): number {
  let n = 0;
  if (offset & 1 && length > 0) (n++, offset++, length--);
  if (offset & 3 && length > 2) (n++, offset += 2, length -= 2);
  for (; length > 3; length -= 4) n++;
  if (length >= 2) (n++, length -= 2);
  if (length > 0) n++;
  return n;
}

/** A reader over a whole blob that counts the bytes it hands out and the accesses, as FsHost.readParts would read them. */
function reader(blob: Uint8Array): { at: (o: number, n: number) => Uint8Array; bytes: () => number; accesses: () => number } {
  let bytes = 0;
  let count = 0;
  return {
    at: (o, n) => {
      const part = blob.subarray(o, o + n);
      bytes += part.length;
      count += accesses(o, part.length);
      return part;
    },
    bytes: () => bytes,
    accesses: () => count,
  };
}
const whole = (blob: Uint8Array): Uint8Array => blob.subarray(0, 4096);

function configs(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && (e.name === 'config' || e.name.endsWith('.bin'))) out.push(p);
    }
  };
  walk(dir);
  return out;
}

const tree = scratchDir('gdrgate-sparse-', TREE_TMP);
await buildTree(tree, HGX);
const blobs = [...configs(H200), ...configs(path.join(REPO, 'test/fixtures/pci-config')), ...configs(path.join(tree, 'sys/devices'))].map((f) => ({
  name: f.startsWith(tree) ? `<hgx>${f.slice(tree.length)}` : path.relative(REPO, f),
  blob: new Uint8Array(readFileSync(f)),
}));
t.ok(blobs.length >= 50, `${blobs.length} real and generated blobs`);

t.test('every blob: the sparse read parses as the whole one', async (t) => {
  for (const { name, blob } of blobs) t.same(parsePciConfig(sparseConfig(reader(blob).at)), parsePciConfig(whole(blob)), name);
});

t.test('a 4 KiB blob with extended capabilities is read in parts: a few hundred bytes, not 4 KiB', async (t) => {
  const big = blobs.filter((b) => b.blob.length === 4096 && parsePciConfig(b.blob).extCapabilities.length > 0);
  t.ok(big.length >= 40, `${big.length} such blobs`);
  for (const { name, blob } of big) {
    const r = reader(blob);
    sparseConfig(r.at);
    const caps = parsePciConfig(blob).extCapabilities.length;
    const std = parsePciConfig(blob).capabilities.length;
    const aer = parsePciConfig(blob).extCapabilities.filter((c) => c.id === 0x0001).length; // AER: 0x18 more (status registers)
    const ssvid = parsePciConfig(blob).capabilities.filter((c) => c.id === 0x0d).length; // Subsystem ID: 8 more (the ids)
    t.ok(r.bytes() <= 64 + 3 + 4 * std + 0x14 + 8 * caps + 0x18 * aer + 8 * ssvid, `${name}: ${r.bytes()} bytes for ${std} standard and ${caps} extended capabilities`);
  }
});

t.test('every register the parser uses is read once: the probes, 6 dwords of header, a dword a capability and the registers behind', async (t) => {
  const big = blobs.filter((b) => b.blob.length === 4096 && parsePciConfig(b.blob).extCapabilities.length > 0);
  for (const { name, blob } of big) {
    const r = reader(blob);
    sparseConfig(r.at);
    const p = parsePciConfig(blob);
    const has = (id: number): number => p.extCapabilities.filter((c) => c.id === id).length;
    const header = p.headerType === 0 ? 6 : 5; // 0x00-0x0f, the Subsystem IDs of a type 0 header, the pointer
    const std = p.capabilities.length + (p.pcie.state === 'present' ? 4 : 0) + p.capabilities.filter((c) => c.id === 0x0d).length;
    const ext = p.extCapabilities.length + has(0x000d) + has(0x000f) + 5 * has(0x0001);
    t.equal(r.accesses(), 3 + header + std + ext, `${name}: ${r.accesses()} configuration accesses`);
  }
});

t.test('the access count follows the kernel: byte, word, dwords, word, byte', async (t) => {
  t.equal(accesses(0, 64), 16);
  t.equal(accesses(0x100, 1), 1);
  t.equal(accesses(0xfff, 1), 1);
  t.equal(accesses(1, 8), 4, 'byte at 1, word at 2, dword at 4, byte at 8');
  t.equal(accesses(2, 4), 2, 'word at 2, word at 4');
  t.equal(accesses(0x34, 1), 1);
});

t.test('short blobs (unprivileged 64 bytes, conventional 256, truncated) are read as they are', async (t) => {
  const gpu = blobs.find((b) => b.name.includes('0000:00:06.0'))!.blob;
  for (const n of [0, 10, 64, 100, 255, 257, 300, 1000, 4095]) {
    const b = gpu.subarray(0, n);
    t.same(sparseConfig(reader(b).at), b, `${n} bytes: read whole`);
  }
  const conv = gpu.subarray(0, 256); // a conventional PCI function's 256 bytes: still read in parts
  const r = reader(conv);
  t.same(parsePciConfig(sparseConfig(r.at)), parsePciConfig(conv), '256 bytes: parses as the whole');
  t.ok(r.bytes() < 200, `256 bytes: ${r.bytes()} of them read`);
});

/** mulberry32 (test/helpers/seeded.ts): a fixed seed makes every failure reproducible. */
const rng = mulberry32;

t.test('seeded mutations of the extended list: pointers, loops, all ones, zeros, truncation', async (t) => {
  const r = rng(0x5eed);
  const bases = blobs.filter((b) => b.blob.length === 4096);
  let n = 0;
  let differ = 0;
  let changed = 0; // mutations that changed what the blob parses to: the test is not fed no-ops
  for (let i = 0; i < 5000; i++) {
    const base = bases[Math.floor(r() * bases.length)]!.blob;
    const b = new Uint8Array(base);
    const caps = parsePciConfig(base).extCapabilities.map((c) => c.offset);
    const kind = Math.floor(r() * 8);
    const at = caps.length && r() < 0.8 ? caps[Math.floor(r() * caps.length)]! : 0x100 + 4 * Math.floor(r() * 960);
    if (kind === 0) b[at + 2 + Math.floor(r() * 2)] = Math.floor(r() * 256); // next pointer bits
    if (kind === 1) new DataView(b.buffer).setUint32(at, (0x100 + 4 * Math.floor(r() * 960)) << 20 | 0x000d, true); // ACS pointing anywhere
    if (kind === 2) new DataView(b.buffer).setUint32(at, caps[0] === undefined ? 0 : (caps[0] << 20) | 0x000f, true); // a loop back
    if (kind === 3) b.fill(r() < 0.5 ? 0xff : 0, at, at + 4);
    // The standard list: the pointer at 0x34, a capability's next pointer or ID, the Status bit that says a list exists.
    const std = parsePciConfig(base).capabilities.map((c) => c.offset);
    if (kind === 5) b[0x34] = Math.floor(r() * 256);
    if (kind === 6 && std.length) b[std[Math.floor(r() * std.length)]! + (r() < 0.5 ? 0 : 1)] = Math.floor(r() * 256);
    if (kind === 7) b[0x06] = b[0x06]! ^ 0x10;
    const cut = kind === 4 ? b.subarray(0, Math.floor(r() * 4096)) : b;
    const got = parsePciConfig(sparseConfig(reader(cut).at));
    const want = parsePciConfig(whole(cut));
    n++;
    if (JSON.stringify(want) !== JSON.stringify(parsePciConfig(base))) changed++;
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      differ++;
      if (differ <= 3) t.same(got, want, `mutation ${i} (kind ${kind} at ${at.toString(16)})`);
    }
  }
  t.equal(differ, 0, `${n} mutations: sparse and whole parse the same`);
  t.ok(changed > n / 2, `${changed} of them changed the parse itself`);
});
