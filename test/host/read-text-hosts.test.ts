// Every Host's readText gives a text file whole or a failed read, never one cut short: the live tree (FsHost), the
// snapshot recorder over it (MemoHost), a drill over it (DrillHost) and a snapshot replayed (SnapshotHost), on a
// file of exactly TEXT_MAX bytes and one a line longer (a slurm.conf whose node line lies past the limit), and on a
// kernel file (/sys, /proc) without its final newline: cut short ("16" read as "1" was a link trained to x1); and on
// kernel files past what the kernel writes there (a sysfs attribute's page, /proc/modules' 1 MiB): no kernel file.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { parseFault } from '../../src/drill/fault.js';
import { DrillHost } from '../../src/drill/overlay.js';
import { FsHost } from '../../src/host/fs-host.js';
import { type Host, TEXT_MAX } from '../../src/host/host.js';
import { MemoHost } from '../../src/snapshot/memo.js';
import { SnapshotHost } from '../../src/snapshot/open.js';
import { SnapTree } from '../../src/snapshot/tree.js';
import { scratchDir } from '../helpers/scratch.js';

const root = fs.realpathSync(scratchDir('gdrgate-readtext-'));
const BIG = `${'#'.repeat(TEXT_MAX)}\nNodeName=gpu1 Gres=gpu:h100:2\n`;
const MAX = `${'#'.repeat(TEXT_MAX - 2)}\nx`;
fs.mkdirSync(path.join(root, 'etc/slurm'), { recursive: true });
fs.writeFileSync(path.join(root, 'etc/slurm/big.conf'), BIG);
fs.writeFileSync(path.join(root, 'etc/slurm/max.conf'), MAX);
const KERNEL: Record<string, string> = { '/sys/bus/pci/devices/0000:18:00.0/max_link_width': '1', '/proc/sys/kernel/osrelease': '5.15.0-13', '/sys/empty': '', '/sys/whole': '16\n', '/etc/hostname': 'gpu001' };
/** Exactly the bound, and one line past it: a sysfs text attribute (one page, 64 KiB), /proc/modules (1 MiB); /proc/cpuinfo has none but TEXT_MAX. */
const line = (n: number): string => `${'9'.repeat(n - 1)}\n`;
const BOUNDED: Record<string, string> = {
  '/sys/bus/pci/devices/0000:18:00.0/resource': line(64 << 10),
  '/sys/bus/pci/devices/0000:18:00.0/local_cpulist': `${line(64 << 10)}0\n`,
  '/proc/modules': line(1 << 20),
  '/proc/version': `${line(64 << 10)}0\n`,
  '/proc/cpuinfo': `${line(1 << 20)}0\n`,
};
for (const [p, text] of [...Object.entries(KERNEL), ...Object.entries(BOUNDED)]) {
  fs.mkdirSync(path.join(root, path.dirname(p)), { recursive: true });
  fs.writeFileSync(path.join(root, p), text);
}

const fault = parseFault('pcie-link:0000:18:00.0=x8');
if (!fault.ok) throw new Error(fault.error);
const tree = new SnapTree();
tree.put('/manifest.json', { kind: 'file', mode: 0o644, data: Buffer.from(`${JSON.stringify({ tool: 'gdrgate', kind: 'snapshot', format: 1, version: '0.0.9', missing: [] })}\n`) });
tree.put('/etc/slurm/big.conf', { kind: 'file', mode: 0o644, data: Buffer.from(BIG) });
tree.put('/etc/slurm/max.conf', { kind: 'file', mode: 0o644, data: Buffer.from(MAX) });
for (const [p, text] of [...Object.entries(KERNEL), ...Object.entries(BOUNDED)]) tree.put(p, { kind: 'file', mode: 0o644, data: Buffer.from(text) });

const hosts: [string, Host][] = [
  ['FsHost', new FsHost(root)],
  ['MemoHost', new MemoHost(new FsHost(root))],
  ['DrillHost', new DrillHost(new FsHost(root), fault.value)],
  ['SnapshotHost', new SnapshotHost('snap.tar', tree)],
];

for (const [name, host] of hosts) {
  t.test(name, async (t) => {
    t.same(await host.readText('/etc/slurm/big.conf'), { ok: false, missing: false, reason: '/etc/slurm/big.conf: larger than 16 MiB, not read' }, 'a line past TEXT_MAX: a failed read');
    const max = await host.readText('/etc/slurm/max.conf');
    t.equal(max.ok, true, 'exactly TEXT_MAX: read');
    t.equal(max.ok && max.value.length, TEXT_MAX, 'every byte of it');
    t.equal(max.ok && max.value.endsWith('\nx'), true, 'up to its last byte');
    const cut = (p: string) => ({ ok: false, missing: false, reason: `${p}: cut short (no final newline, which the kernel ends every text file with)` });
    t.same(
      await Promise.all(Object.keys(KERNEL).map((p) => host.readText(p))),
      [cut('/sys/bus/pci/devices/0000:18:00.0/max_link_width'), cut('/proc/sys/kernel/osrelease'), { ok: true, value: '' }, { ok: true, value: '16\n' }, { ok: true, value: 'gpu001' }],
      'a kernel file without its final newline: cut short; empty, whole, or not the kernel\'s: as read',
    );
    const over = (p: string, size: string) => ({ ok: false, missing: false, reason: `${p}: larger than ${size} (more than the kernel writes there), not read` });
    t.same(
      await Promise.all(Object.keys(BOUNDED).map(async (p) => { const r = await host.readText(p); return r.ok ? r.value.length : r; })),
      [64 << 10, over('/sys/bus/pci/devices/0000:18:00.0/local_cpulist', '64 KiB'), 1 << 20, over('/proc/version', '64 KiB'), (1 << 20) + 2],
      'at the kernel\'s bound: read whole; a line past it: not read; /proc/cpuinfo (no bound below TEXT_MAX): read',
    );
  });
}
