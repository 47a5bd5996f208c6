// Replay equality: a snapshot (as a file, and unpacked by GNU tar) gives the report of the tree it was taken from.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { promises as fsp, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildTree } from '../gen/sysfs-tree.js';
import { node as hgx } from '../gen/topologies/sglang30401-hgx-h100.js';
import { cli } from '../helpers/cli.js';
import { CLI, H200 } from '../helpers/paths.js';
import { validate } from '../helpers/schema.js';
import { readTar } from '../../src/snapshot/tar.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';
import { VERSION } from '../../src/version.js';

const strip = (s: string): unknown => {
  const o = JSON.parse(s) as Record<string, unknown>;
  for (const k of ['time', 'durationMs', 'root']) delete o[k];
  return o;
};

/** Snapshot `root` to dir/name, unpack it with GNU tar next to it; returns both paths. */
function snap(t: Test, root: string, dir: string, name: string): { file: string; unpacked: string; ms: number } {
  const file = path.join(dir, name);
  const t0 = performance.now();
  const r = cli(['snapshot', '--root', root, '--out', file]);
  const ms = Math.round(performance.now() - t0);
  t.equal(r.code, 0, r.stderr);
  const unpacked = path.join(dir, `${name}.d`);
  spawnSync('mkdir', ['-p', unpacked]);
  t.equal(spawnSync('tar', ['-xzf', file, '-C', unpacked]).status, 0, 'GNU tar unpacks it');
  return { file, unpacked, ms };
}

function sameReport(t: Test, args: string[], orig: string, ...replays: string[]): void {
  const want = cli([...args, '--root', orig, '--json']);
  for (const r of replays) {
    const got = cli([...args, '--root', r, '--json']);
    t.equal(got.code, want.code, `${args[0]} exit code from ${path.basename(r)}`);
    t.same(strip(got.stdout), strip(want.stdout), `${args.join(' ')} from ${path.basename(r)} equals the original`);
  }
}

t.test('the bundled H200 capture: check --json replays identically from the file and from tar xzf', async (t) => {
  const dir = await scratchDirAsync('gdrgate-replay-', TREE_TMP);
  const s = snap(t, H200, dir, 'h200.tar.gz');
  sameReport(t, ['check'], H200, s.file, s.unpacked);
  sameReport(t, ['topo'], H200, s.file, s.unpacked);
  const rep = JSON.parse(cli(['check', '--root', s.file, '--json']).stdout) as unknown;
  t.same(validate('report', rep), [], 'the replayed report validates');
  const twice = snap(t, s.file, dir, 'h200-again.tar.gz');
  sameReport(t, ['check'], H200, twice.file);
  const names = (f: string): string[] => readTar(gunzipSync(readFileSync(f))).map((e) => e.path).filter((p) => p !== 'manifest.json');
  t.same(names(twice.file), names(s.file), 'a snapshot of the snapshot holds the same paths');
  t.comment(`h200-vm snapshot: ${statSync(s.file).size} bytes, CLI run ${s.ms} ms`);
});

t.test('an 8-GPU/8-NIC HGX tree: check, topo and baseline capture replay identically; a few hundred KB at most', async (t) => {
  const dir = await scratchDirAsync('gdrgate-replay-', TREE_TMP);
  const root = path.join(dir, 'hgx');
  await buildTree(root, hgx);
  const s = snap(t, root, dir, 'hgx.tar.gz');
  sameReport(t, ['check'], root, s.file, s.unpacked);
  sameReport(t, ['topo'], root, s.file, s.unpacked);
  const cap = (r: string): unknown => {
    const b = JSON.parse(cli(['baseline', 'capture', '--root', r]).stdout) as { classes: { captured: { at?: string } }[] };
    delete b.classes[0]!.captured.at;
    return b;
  };
  t.same(cap(s.file), cap(root), 'baseline capture --root FILE equals the tree');
  const size = statSync(s.file).size;
  t.ok(size < 300 * 1024, `snapshot is ${size} bytes`);
  t.comment(`hgx 8-GPU snapshot: ${size} bytes, CLI run ${s.ms} ms (node start-up included)`);
  const topo = JSON.parse(cli(['topo', '--root', s.file, '--json']).stdout) as { cells: Record<string, Record<string, string>> };
  t.equal(topo.cells.GPU0?.NIC0, 'PIX', 'GPU0 shares its switch with mlx5_0');
  t.equal(topo.cells.GPU0?.NIC4, 'SYS');
});

t.test('the manifest: host, version, counts, missing paths; nothing outside the allowlist', async (t) => {
  const dir = await scratchDirAsync('gdrgate-replay-', TREE_TMP);
  const root = path.join(dir, 'hgx');
  await buildTree(root, hgx);
  const s = snap(t, root, dir, 'm.tar.gz');
  const m = JSON.parse(readFileSync(path.join(s.unpacked, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  const { tool, kind, format, version, host, time, uid, root: at, live, counts } = m;
  t.match(time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.same({ tool, kind, format, version, host, uid, root: at, live, counts }, {
    tool: 'gdrgate', kind: 'snapshot', format: 1, version: VERSION, host: 'gpu001', uid: process.getuid?.(), root, live: false,
    counts: { files: 1213, dirs: 152, links: 144, bytes: 286360, requests: 2223, pciDevices: 48, pathDevices: 48, gpus: 8, nics: 8 },
  });
  t.same([m.unreadable, m.skipped, m.commands], [[], [], []], 'nothing unreadable, nothing skipped, no command run');
  t.same(m.notes, ['commands not run: not a live root (a capture keeps its own capture/ directory)']);
  t.ok((m.missing as string[]).includes('/sys/kernel/mm/memory_peers/nv_mem/version'), 'absent optional files are listed as missing');
  const paths = readTar(gunzipSync(readFileSync(s.file))).map((e) => `/${e.path}`);
  const outside = paths.filter((p) => p !== '/manifest.json' && !/^\/(sys|proc)(\/|$)/.test(p));
  t.same(outside, [], 'only /sys and /proc (plus the manifest) in a generated tree');
  t.notOk(paths.some((p) => /\/(environ|cmdline|mountinfo|maps)$/.test(p) && !p.startsWith('/proc/cmdline')), 'no process environment or command lines');
  t.ok(paths.includes('/sys/bus/pci/devices/0000:18:00.0'), 'the bus link');
  t.ok(paths.some((p) => p.endsWith('/0000:18:00.0/config')), 'binary config');
  // pcie-payload: the path devices' ASPM link/ attributes, the ASPM policy and the command line are kept.
  t.same(paths.filter((p) => /\/link\/[a-z0-9_]+$/.test(p)).length, 16, 'l1_aspm of the 8 GPUs and the 8 switch upstream ports');
  t.ok(paths.includes('/sys/module/pcie_aspm/parameters/policy') && paths.includes('/proc/cmdline'), 'the ASPM policy and /proc/cmdline');
});

t.test('CLI: --out - streams the archive, the default name, atomic write, bad input exits 2', async (t) => {
  const dir = t.testdir({ 'not-a-snapshot.tar.gz': 'hello' });
  const r = spawnSync(process.execPath, [CLI, 'snapshot', '--root', H200, '--out', '-'], { cwd: dir });
  t.equal(r.status, 0);
  t.ok(readTar(gunzipSync(r.stdout)).some((e) => e.path === 'manifest.json'), 'stdout is the tar.gz');
  const d = spawnSync(process.execPath, [CLI, 'snapshot', '--root', H200], { cwd: dir, encoding: 'utf8' });
  t.equal(d.status, 0, d.stderr);
  const files = await fsp.readdir(dir);
  t.match(files.find((f) => f.startsWith('gdrgate-')), /^gdrgate-unknown-\d{8}T\d{6}Z\.tar\.gz$/, 'gdrgate-<host>-<UTC time>.tar.gz (the capture has no hostname)');
  t.notOk(files.some((f) => f.endsWith('.tmp')), 'no temporary file left');
  const bad = cli(['check', '--root', path.join(dir, 'not-a-snapshot.tar.gz')]);
  t.equal(bad.code, 2);
  t.equal(bad.stderr, `gdrgate: --root ${path.join(dir, 'not-a-snapshot.tar.gz')}: not a snapshot archive: truncated archive: partial header at offset 0\n`);
  const noDir = cli(['snapshot', '--root', H200, '--out', path.join(dir, 'no/such/dir/x.tar.gz')]);
  t.equal(noDir.code, 2);
  const out = path.join(dir, 'no/such/dir');
  t.equal(noDir.stderr, `gdrgate: --out ${out}/x.tar.gz: ENOENT: no such file or directory, lstat '${out}'\n`);
});
