// A tree broken where no kernel breaks it (a listing that fails, a file where a directory is, a cut class or vendor, a
// zeroed config space, a cooling state above its maximum, links copied as directories, a file cut short, another
// function's config space), judged by the built CLI with
// a baseline captured from the healthy tree: never a FAIL and never a drain, only skips or "nothing judged". The
// generated 8-GPU HGX (test/gen/topologies/sglang30401-hgx-h100.ts) with its NVIDIA procfs and PCIe cooling devices.
import t from 'tap';
import { cpSync, mkdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { readTar, writeTar } from '../../src/snapshot/tar.js';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { hgx, P0 } from '../checks/_trees.js';
import { writeNvidiaGpus } from '../gen/nvidia-procfs.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { cli } from '../helpers/cli.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';

const dir = scratchDir('gdrgate-read-faults-', TREE_TMP);
const healthy = path.join(dir, 'hgx');
const n = hgx();
await buildTree(healthy, n);
await writeNvidiaGpus(healthy, n);
const dev = (root: string, bdf: string): string => path.join(root, 'sys/bus/pci/devices', bdf);
const realDev = (root: string, bdf: string): string => path.resolve(path.dirname(dev(root, bdf)), readlinkSync(dev(root, bdf)));
// The link-speed cooling device of the GPU's root port, as drivers/thermal/pcie_cooling.c registers one.
const cooling = path.join(healthy, 'sys/class/thermal/cooling_device0');
mkdirSync(cooling, { recursive: true });
writeFileSync(path.join(cooling, 'type'), `PCIe_Port_Link_Speed_${P0.rp}\n`);
writeFileSync(path.join(cooling, 'cur_state'), '0\n');
writeFileSync(path.join(cooling, 'max_state'), '3\n');
const baseline = path.join(dir, 'baseline.json');
const captured = cli(['baseline', 'capture', '--root', healthy, '--match', 'gpu*']);
writeFileSync(baseline, captured.stdout);

const judge = (root: string) => cli(['check', '--root', root, '--baseline', baseline, '--node', 'gpu001']);

t.test('the healthy tree passes with the baseline (the cases below break only what they say)', async (t) => {
  t.equal(captured.code, 0, captured.stderr);
  const r = judge(healthy);
  t.equal(r.code, 0, r.stdout);
  t.equal(r.stdout.split('\n').filter((l) => /^(FAIL|WARN|ERROR) /.test(l)).length, 0, r.stdout);
});

interface Case {
  readonly name: string;
  readonly breakIt: (root: string) => void;
  /** A line the report must hold, whole (or null: nothing judged, exit 3). */
  readonly line: RegExp | null;
}

const cases: Case[] = [
  { name: '/sys/class/infiniband a FIFO: the adapters cannot be listed', breakIt: (r) => (rmSync(path.join(r, 'sys/class/infiniband'), { recursive: true }), execFileSync('/usr/bin/mkfifo', [path.join(r, 'sys/class/infiniband')])), line: null },
  { name: '/sys/bus/pci/devices a link to itself: the PCI functions cannot be listed', breakIt: (r) => (rmSync(path.join(r, 'sys/bus/pci/devices'), { recursive: true }), symlinkSync('devices', path.join(r, 'sys/bus/pci/devices'))), line: null },
  { name: '/proc/driver/nvidia a file (ENOTDIR below it): the driver unknown, not "none"', breakIt: (r) => (rmSync(path.join(r, 'proc/driver/nvidia'), { recursive: true }), writeFileSync(path.join(r, 'proc/driver/nvidia'), 'x\n')), line: /^SKIP +device-inventory +nvidia +driver ENOTDIR: not a directory/m },
  { name: "a GPU's class cut to 0x03: that function unidentified, not a missing GPU", breakIt: (r) => writeFileSync(path.join(realDev(r, P0.gpu), 'class'), '0x03'), line: new RegExp(`^SKIP +device-inventory +${P0.gpu} `, 'm') },
  { name: "a GPU's vendor cut to 0x10: the same", breakIt: (r) => writeFileSync(path.join(realDev(r, P0.gpu), 'vendor'), '0x10'), line: new RegExp(`^SKIP +device-inventory +${P0.gpu} `, 'm') },
  { name: "a GPU's config space zeroed: IDs from sysfs, links and AER unknown", breakIt: (r) => writeFileSync(path.join(realDev(r, P0.gpu), 'config'), Buffer.alloc(4096)), line: new RegExp(`^PASS +device-inventory +${P0.gpu} `, 'm') },
  { name: 'a cooling state above its maximum (7 of 3): unknown, not a throttled link', breakIt: (r) => writeFileSync(path.join(r, 'sys/class/thermal/cooling_device0/cur_state'), '7\n'), line: new RegExp(`^SKIP +pcie-throttle +${P0.rp} +cooling_device0 cur_state unknown \\(/sys/class/thermal/cooling_device0/cur_state 7 is above max_state 3\\)$`, 'm') },
  { name: "a GPU's /sys/bus/pci/devices entry a copied directory: its place unknown, no path judged NODE", breakIt: (r) => { const real = realDev(r, P0.gpu); rmSync(dev(r, P0.gpu)); cpSync(real, dev(r, P0.gpu), { recursive: true }); }, line: new RegExp(`^SKIP +device-inventory +${P0.gpu} `, 'm') },
  { name: "mlx5_0's fw_ver cut short (no final newline): unknown, not firmware 28.39", breakIt: (r) => writeFileSync(path.join(r, 'sys/class/infiniband/mlx5_0/fw_ver'), '28.39'), line: /^SKIP +device-inventory +mlx5_0 +firmware unknown \(\/sys\/class\/infiniband\/mlx5_0\/fw_ver: cut short \(no final newline, which the kernel ends every text file with\)\) \(want 28\.39\.1002\)$/m },
  { name: "GPU0's resource cut to its first 2 lines: unknown, not a 16 MiB window", breakIt: (r) => writeFileSync(path.join(realDev(r, P0.gpu), 'resource'), readFileSync(path.join(realDev(r, P0.gpu), 'resource'), 'utf8').split('\n').slice(0, 2).join('\n') + '\n'), line: new RegExp(`^SKIP +gpu-bar1 +${P0.gpu} +resource unknown \\(/sys/devices/\\S+/${P0.gpu}/resource: resource has 2 line\\(s\\), fewer than the kernel writes \\(7\\): cut short\\)$`, 'm') },
  { name: "mlx5_0's config space holding GPU0's: refused, the adapter told by sysfs", breakIt: (r) => writeFileSync(path.join(realDev(r, P0.nic), 'config'), readFileSync(path.join(realDev(r, P0.gpu), 'config'))), line: /^PASS +device-inventory +mlx5_0 +RDMA /m },
  { name: "an adapter's device link a copied directory: its PCI function unknown, not a missing NIC", breakIt: (r) => { const l = path.join(r, 'sys/class/infiniband/mlx5_0/device'); const copy = `${r}-nic`; cpSync(realpathSync(l), copy, { recursive: true }); rmSync(l); renameSync(copy, l); }, line: /^SKIP +device-inventory +mlx5_0 +RDMA adapter mlx5_0: its PCI function could not be read \(\/sys\/class\/infiniband\/mlx5_0\/device: not a link, so its PCI function cannot be told\)$/m },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const root = path.join(dir, `case-${cases.indexOf(c)}`);
    cpSync(healthy, root, { recursive: true, verbatimSymlinks: true });
    c.breakIt(root);
    const r = judge(root);
    t.same(r.stdout.split('\n').filter((l) => /^(FAIL|ERROR) /.test(l)), [], 'no FAIL, no ERROR');
    if (c.line === null) {
      t.equal(r.code, 3, `nothing judged: ${r.stderr.split('\n')[0]}`);
      t.equal(/the node's devices could not be listed, so nothing was judged$/m.test(r.stderr), true, r.stderr.split('\n')[0]!);
    } else {
      t.equal(r.code, 0, r.stdout);
      t.equal(c.line.test(r.stdout), true, `${c.line}:\n${r.stdout}`);
    }
    // The Prolog on the same tree: no drain, whatever it could or could not tell.
    const config = path.join(root, 'config.json');
    writeFileSync(config, JSON.stringify({ baseline, root, logFile: path.join(root, 'gate.log'), stateDir: path.join(root, 'state'), spool: path.join(root, 'spool'), deadlineMs: 60_000 }));
    const p = cli(['prolog', '--config', config, '--dry-run'], { SLURMD_NODENAME: 'gpu001', SLURM_JOB_ID: '7' });
    t.equal(p.code, 0, p.stdout);
    t.equal(p.stdout.trim().split('\n').pop()!.endsWith(' action=none'), true, p.stdout.trim().split('\n').pop()!);
  });
}

t.test('a snapshot whose /proc/driver/nvidia is a file (ENOTDIR in the archive): the driver unknown, not "none"', async (t) => {
  const snap = path.join(dir, 'healthy.tar.gz');
  t.equal(cli(['snapshot', '--root', healthy, '--out', snap]).code, 0);
  const entries = readTar(gunzipSync(readFileSync(snap))).filter((e) => !e.path.startsWith('proc/driver/nvidia/'));
  const nv = entries.findIndex((e) => e.path === 'proc/driver/nvidia');
  t.equal(entries[nv]?.kind, 'dir', 'the archive holds it as a directory');
  entries[nv] = { path: 'proc/driver/nvidia', kind: 'file', mode: 0o644, mtime: 0, data: Buffer.from('x\n') };
  const broken = path.join(dir, 'nvidia-file.tar.gz');
  writeFileSync(broken, gzipSync(writeTar(entries)));
  const r = judge(broken);
  t.equal(r.code, 0, r.stdout);
  t.same(r.stdout.split('\n').filter((l) => /^(FAIL|ERROR) /.test(l)), [], 'no FAIL, no ERROR');
  t.equal(/^SKIP +device-inventory +nvidia +driver \/proc\/driver\/nvidia\/version: ENOTDIR: not a directory, snapshot \/proc\/driver\/nvidia \(want open 570\.133\.20\)$/m.test(r.stdout), true, r.stdout);
});
