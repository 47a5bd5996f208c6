// Every byte a command prints reaches a reader that starts late: `snapshot --out -` and `check --json` into a pipe
// whose reader sleeps 1 s first, once as a shell makes it (a blocking pipe: write(2) waits) and once inherited
// from a Node parent that already made it non-blocking (write(2) answers EAGAIN when the 64 KiB buffer is full).
// The old writer handed the rest to process.stdout and the exit dropped it: 64 KiB arrived, exit 0.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { buildTree, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as hgx } from '../gen/topologies/sglang30401-hgx-h100.js';
import { CLI } from '../helpers/paths.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';

const dir = scratchDir('gdrgate-slow-');
const tree = path.join(scratchDir('gdrgate-slow-tree-', TREE_TMP), 'big');

/** The HGX H100 tree once per PCI domain 0000..0005: 48 GPUs and 48 NICs, reports and snapshots past 128 KiB. */
function copyInDomain(d: GenDevice, k: number): GenDevice {
  const dom = k.toString(16).padStart(4, '0');
  return {
    ...d,
    bdf: `${dom}${d.bdf.slice(4)}`,
    ...(d.iommuGroup !== undefined ? { iommuGroup: d.iommuGroup + 100 * k } : {}),
    ...(d.ib ? { ib: { ...d.ib, name: `mlx5_${k}_${d.ib.name.slice(5)}` } } : {}),
    ...(d.children ? { children: d.children.map((c) => copyInDomain(c, k)) } : {}),
  };
}
const big: GenNode = {
  ...hgx,
  hostBridges: [0, 1, 2, 3, 4, 5].flatMap((k) => hgx.hostBridges.map((hb) => ({ ...hb, domainBus: `${k.toString(16).padStart(4, '0')}${hb.domainBus.slice(4)}`, devices: hb.devices.map((d) => copyInDomain(d, k)) }))),
};
await buildTree(tree, big);

// A parent that touches its own process.stdout (libuv sets O_NONBLOCK on the pipe) and hands that pipe to the CLI.
const NONBLOCKING = `process.stdout; const r = require('node:child_process').spawnSync(process.execPath, JSON.parse(process.argv[1]), { stdio: 'inherit' }); process.exitCode = r.status ?? 99;`;

/** `args` into `(sleep 1; cat > file)`; the CLI's exit code and the bytes that arrived. */
function slowRead(args: string[], nonBlocking: boolean, name: string): { code: string; bytes: Buffer } {
  const file = path.join(dir, name);
  const cmd = nonBlocking ? [process.execPath, '-e', NONBLOCKING, JSON.stringify([CLI, ...args])] : [process.execPath, CLI, ...args];
  const quoted = cmd.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('/bin/bash', ['-c', `${quoted} 2>/dev/null | (sleep 1; /bin/cat > '${file}'); echo "\${PIPESTATUS[0]}"`], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.stdout.trim(), bytes: readFileSync(file) };
}

/** The same command into a file: what it prints in full. */
function whole(t: Test, args: string[], name: string): Buffer {
  const file = path.join(dir, name);
  const r = spawnSync('/bin/bash', ['-c', `'${process.execPath}' '${CLI}' ${args.map((a) => `'${a}'`).join(' ')} > '${file}' 2>/dev/null`], { timeout: 60_000 });
  t.equal(r.status, 0, `${args.join(' ')} into a file: exit 0`);
  return readFileSync(file);
}

/** A whole document: the JSON parses, the tar.gz lists (a cut one fails both); what it holds, to compare runs. */
function contents(kind: string, file: string): string {
  if (kind === 'check') return JSON.stringify(Object.keys(JSON.parse(readFileSync(file, 'utf8')) as object));
  const r = spawnSync('/bin/tar', ['-tzf', file], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout : `tar: ${r.stderr}`;
}

/** The length of a gzip stream's contents, or -1 when the stream is cut or corrupt. */
function inflated(b: Buffer): number {
  try {
    return gunzipSync(b).length;
  } catch {
    return -1;
  }
}

const cases: { what: string; args: string[] }[] = [
  { what: 'check --json of a 48-GPU tree', args: ['check', '--root', tree, '--json'] },
  { what: 'snapshot --out - of the 48-GPU tree', args: ['snapshot', '--root', tree, '--out', '-'] },
];

for (const c of cases) {
  t.test(c.what, async (t) => {
    const kind = c.args[0]!;
    const full = whole(t, c.args, `${kind}.full`);
    t.ok(full.length > 128 * 1024, `more than two pipe buffers (${full.length} bytes)`);
    for (const nonBlocking of [false, true]) {
      const name = `${kind}.${nonBlocking}`;
      const r = slowRead(c.args, nonBlocking, name);
      const pipe = nonBlocking ? 'a non-blocking pipe' : 'a blocking pipe';
      t.equal(r.code, '0', `${pipe}: exit 0`);
      // Times and durations inside change a few bytes between runs; the length of the whole may not by much. A
      // snapshot is compared uncompressed: gzip's output length moves with those bytes by more than they do (80
      // bytes seen), and gunzip itself proves the stream whole (its trailer holds the CRC and the length).
      const [got, want] = kind === 'snapshot' ? [inflated(r.bytes), inflated(full)] : [r.bytes.length, full.length];
      t.ok(got >= 0 && Math.abs(got - want) < 1024, `${pipe}: all of it arrived (${got} of ~${want} bytes${kind === 'snapshot' ? ', as tar' : ''})`);
      t.equal(contents(kind, path.join(dir, name)), contents(kind, path.join(dir, `${kind}.full`)), `${pipe}: one whole document`);
    }
  });
}
