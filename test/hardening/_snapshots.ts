// Hostile snapshot shapes the bounds and fuzz tests share, each a whole tar; and a real snapshot to mutate.
import { gunzipSync } from 'node:zlib';
import { FsHost } from '../../src/host/fs-host.js';
import { buildSnapshot } from '../../src/snapshot/build.js';
import { writeTar, type TarEntry } from '../../src/snapshot/tar.js';
import { H200 } from '../helpers/paths.js';

export const MANIFEST: TarEntry = {
  path: 'manifest.json',
  kind: 'file',
  mode: 0o644,
  mtime: 0,
  data: Buffer.from(JSON.stringify({ tool: 'gdrgate', kind: 'snapshot', format: 1 })),
};

const file = (p: string, text = 'x\n'): TarEntry => ({ path: p, kind: 'file', mode: 0o644, mtime: 0, data: Buffer.from(text) });
const link = (p: string, target: string): TarEntry => ({ path: p, kind: 'link', mode: 0o777, mtime: 0, target });

/** `n` empty files after the manifest, headers stamped from one template (writeTar would take seconds here). */
function manyEntries(n: number): Uint8Array {
  const head = writeTar([MANIFEST]);
  const end = head.findIndex((_, i) => i % 512 === 0 && i > 0 && head.subarray(i, i + 512).every((x) => x === 0));
  const tpl = writeTar([file('e/000000', '')]).subarray(0, 512);
  const out = new Uint8Array(end + n * 512 + 1024);
  out.set(head.subarray(0, end));
  const base = tpl.reduce((a, x, i) => a + (i >= 148 && i < 156 ? 0x20 : x), 0); // the checksum field counts as spaces
  for (let i = 0; i < n; i++) {
    const h = out.subarray(end + i * 512, end + i * 512 + 512);
    h.set(tpl);
    const name = String(i).padStart(6, '0');
    let sum = base;
    for (let j = 0; j < 6; j++) {
      sum += name.charCodeAt(j) - 0x30;
      h[2 + j] = name.charCodeAt(j);
    }
    h.set(Buffer.from(sum.toString(8).padStart(6, '0') + '\0 '), 148);
  }
  return out;
}

/** The shapes, each with the manifest (so only the shape itself can be what is refused). */
export const HOSTILE: Record<string, () => Uint8Array> = {
  'a path of 200,000 components': () => writeTar([MANIFEST, file(Array(200_000).fill('a').join('/'))]),
  'a link target of a million components': () => writeTar([MANIFEST, link('sys/x', Array(1_000_000).fill('a').join('/')), file('sys/y')]),
  'a name longer than NAME_MAX': () => writeTar([MANIFEST, file(`sys/${'n'.repeat(300)}`)]),
  // 2,000 entries of 60 directories each: 120,000 nodes from a 1 MB tar.
  'implied directories past the entry cap': () =>
    writeTar([MANIFEST, ...Array.from({ length: 2000 }, (_, i) => file(`${Array.from({ length: 59 }, (_, j) => `d${i}_${j}`).join('/')}/f`))]),
  'more entries than the cap': () => manyEntries(100_001),
};

/** Shapes that stay within the limits but make the resolver work: it must answer ELOOP or ENAMETOOLONG. */
export const TRICKY: Record<string, () => Uint8Array> = {
  'a 40-link chain and a loop': () =>
    writeTar([MANIFEST, ...Array.from({ length: 45 }, (_, i) => link(`sys/l${i}`, `l${i + 1}`)), link('sys/l45', 'l0'), link('sys/self', 'self')]),
  // Each link leaves 63 components still to walk after the next link: the pending path grows past PATH_MAX/2.
  'links that grow the pending path': () =>
    writeTar([MANIFEST, ...Array.from({ length: 40 }, (_, i) => link(`sys/g${i}`, `g${i + 1}/${Array(63).fill('z').join('/')}`))]),
  'an absolute link and one that climbs out': () => writeTar([MANIFEST, link('sys/abs', '/etc'), link('sys/up', '../../etc'), file('sys/ok')]),
};

export const EMPTY_TAR = (): Uint8Array => writeTar([]);
export const UNRELATED_TAR = (): Uint8Array => writeTar([file('README'), file('sys/bus/pci/devices/.keep', '')]);

/** The bundled H200 capture as `gdrgate snapshot` packs it, fixed in time so every run mutates the same bytes. */
export async function realSnapshot(): Promise<{ gz: Uint8Array; tar: Uint8Array }> {
  const snap = await buildSnapshot(new FsHost(H200), false, { commands: false, now: new Date(Date.UTC(2026, 0, 1)) });
  return { gz: snap.gz, tar: gunzipSync(snap.gz) };
}
