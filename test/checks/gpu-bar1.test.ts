// gpu-bar1: the GPUDirect window of every GPU (resource line 2 on H100, as on the live H200) against the reference.
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { node as DGX1 } from '../gen/topologies/dgx1v-8xv100-4nic.js';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { cut, detach, dev, GPUS, HGX, P0, type Patch, patches, put, remove, table, type Want } from './_trees.js';

const BASE = 'a 64-bit prefetchable BAR';
const ok = (subject: string, expected = BASE, actual = '128 GiB'): Want => ({ status: 'pass', code: 'bar1-ok', subject, expected, actual });
const bar1 = (gib: number) => (n: GenNode): void => void (dev(n, P0.gpu).bar1GiB = gib);
const unreadable: Want = { status: 'skip', code: 'bar1-unreadable', subject: P0.gpu };
const na: Want = { status: 'skip', code: 'bar1-na', subject: 'node' };
/** A file with each line (numbered from 0) rewritten. */
const edit = (kpath: string, fn: (line: string, i: number) => string): Patch => async (root) => {
  const file = path.join(root, kpath);
  await fsp.writeFile(file, (await fsp.readFile(file, 'utf8')).split('\n').map(fn).join('\n'));
};
/** Line 2 of a GPU whose 128 GiB BAR has no address (IORESOURCE_UNSET | the BAR's flags, start 0, end size-1). */
const UNSET_128G = '0x0000000000000000 0x0000001fffffffff 0x000000002014220c';
/** The switch port above GPU0 with its prefetchable window moved 1 TiB away from the GPU (line 15 of 17). */
const strayWindow = put(
  `sys/bus/pci/devices/${P0.downGpu}/resource`,
  `${'0x0000000000000000 0x0000000000000000 0x0000000000000000\n'.repeat(15)}0x0000f00000000000 0x0000f03fffffffff 0x0000000000102201\n0x0000000000000000 0x0000000000000000 0x0000000000000000\n`,
);

export const cases = table('gpu-bar1', [
  {
    name: 'valid: healthy HGX, a 128 GiB window at line 2 of every GPU, inside its switch port window',
    subjects: GPUS,
    bare: GPUS.map((g) => ok(g)),
    based: GPUS.map((g) => ok(g, '>= 128 GiB')),
  },
  {
    name: 'invalid with baseline: GPU0 window 32 GiB where the reference had 128 GiB (Resizable BAR lost)',
    change: bar1(32),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu, BASE, '32 GiB')],
    based: [{ status: 'fail', code: 'bar1-small', subject: P0.gpu, expected: '>= 128 GiB', actual: '32 GiB' }],
  },
  {
    name: 'valid with baseline: a larger window than the reference (256 GiB) is no fault',
    change: bar1(256),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu, BASE, '256 GiB')],
    based: [ok(P0.gpu, '>= 128 GiB', '256 GiB')],
  },
  {
    name: 'valid without baseline: a window of exactly 256 MiB (the floor itself); a fail against the 128 GiB reference',
    change: bar1(0.25),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu, BASE, '256 MiB')],
    based: [{ status: 'fail', code: 'bar1-small', subject: P0.gpu, expected: '>= 128 GiB', actual: '256 MiB' }],
  },
  {
    name: 'valid with baseline: a 128 MiB window where the reference had 128 MiB; below the floor it warns only without one',
    change: bar1(0.125),
    ref: bar1(0.125),
    subjects: [P0.gpu],
    bare: [{ status: 'warn', code: 'bar1-small', subject: P0.gpu, expected: '>= 256 MiB', actual: '128 MiB' }],
    based: [ok(P0.gpu, '>= 128 MiB', '128 MiB')],
  },
  {
    name: 'invalid: line 2 unassigned; what is left is BAR3\'s 32 MiB: a warning alone, a fail against the reference',
    change: bar1(0),
    bare: [{ status: 'warn', code: 'bar1-small', subject: P0.gpu, expected: '>= 256 MiB', actual: '32 MiB' }],
    based: [{ status: 'fail', code: 'bar1-small', subject: P0.gpu, expected: '>= 128 GiB', actual: '32 MiB' }],
  },
  {
    name: 'invalid: no BAR assigned at all (every line zero, as when the BIOS could not place the GPU)',
    patch: put(`sys/bus/pci/devices/${P0.gpu}/resource`, '0x0000000000000000 0x0000000000000000 0x0000000000000000\n'.repeat(13)),
    bare: [{ status: 'fail', code: 'bar1-none', subject: P0.gpu, expected: BASE, actual: 'none' }],
    based: [{ status: 'fail', code: 'bar1-none', subject: P0.gpu, expected: '>= 128 GiB', actual: 'none' }],
  },
  {
    // __pci_read_base ("initial BAR value invalid"), pci_assign_resource ("failed to assign") and pci_release_resource
    // keep the size and set IORESOURCE_UNSET with start 0, end size-1: it read as a 128 GiB window at 0, outside.
    name: 'invalid: line 2 unassigned as the kernel prints it (IORESOURCE_UNSET, 0 to size-1): no window, not one "outside"',
    patch: edit(`sys/bus/pci/devices/${P0.gpu}/resource`, (l, i) => (i === 2 ? UNSET_128G : l)),
    bare: [{ status: 'fail', code: 'bar1-none', subject: P0.gpu, expected: BASE, actual: 'none' }],
    based: [{ status: 'fail', code: 'bar1-none', subject: P0.gpu, expected: '>= 128 GiB', actual: 'none' }],
  },
  {
    name: 'invalid: line 2 and the port\'s prefetchable window both unassigned (0 to size-1): no window, never "inside" one',
    patch: patches(
      edit(`sys/bus/pci/devices/${P0.gpu}/resource`, (l, i) => (i === 2 ? UNSET_128G : l)),
      edit(`sys/bus/pci/devices/${P0.downGpu}/resource`, (l, i) => (i === 15 ? '0x0000000000000000 0x0000001fffffffff 0x0000000020102201' : l)),
    ),
    bare: [{ status: 'fail', code: 'bar1-none', subject: P0.gpu, expected: BASE, actual: 'none' }],
    based: [{ status: 'fail', code: 'bar1-none', subject: P0.gpu, expected: '>= 128 GiB', actual: 'none' }],
  },
  {
    name: 'invalid: the port\'s prefetchable window not decoded (IORESOURCE_DISABLED, its range kept): it holds no window',
    patch: edit(`sys/bus/pci/devices/${P0.downGpu}/resource`, (l, i) => (i === 15 ? l.replace(/0x0000000000102201$/, '0x0000000010102201') : l)),
    bare: [{ status: 'fail', code: 'bar1-outside', subject: P0.gpu, expected: 'inside the bridge window', actual: 'outside' }],
    based: [{ status: 'fail', code: 'bar1-outside', subject: P0.gpu, expected: 'inside the bridge window', actual: 'outside' }],
  },
  {
    name: 'invalid: the window lies outside the upstream switch port\'s prefetchable window',
    patch: strayWindow,
    bare: [{ status: 'fail', code: 'bar1-outside', subject: P0.gpu, expected: 'inside the bridge window', actual: 'outside' }],
    based: [{ status: 'fail', code: 'bar1-outside', subject: P0.gpu, expected: 'inside the bridge window', actual: 'outside' }],
  },
  {
    name: 'skip: resource absent (a capture without it): unknown, never pass',
    patch: remove(`sys/bus/pci/devices/${P0.gpu}/resource`),
    bare: [unreadable],
    based: [unreadable],
  },
  {
    name: 'skip: resource in another format: unknown, never a zero window',
    patch: put(`sys/bus/pci/devices/${P0.gpu}/resource`, '0x0000100000000000 0x0000103fffffffff\n'),
    bare: [unreadable],
    based: [unreadable],
  },
  {
    // resource_show prints every field "0x%016llx": a field cut to "0x00001400" is no value it wrote (a torn or edited
    // file). Read as one, the window started at 0x1400, below the switch port's window: bar1-outside, a fail.
    name: 'skip: the window\'s start cut to 8 hex digits (not resource_show\'s 0x%016llx): unknown, never "outside"',
    patch: edit(`sys/bus/pci/devices/${P0.gpu}/resource`, (l, i) => (i === 2 ? l.slice(0, 10) + l.slice(18) : l)),
    bare: [unreadable],
    based: [unreadable],
  },
  {
    name: 'valid: the upstream port\'s window end cut to 8 hex digits: its windows unknown, never "outside"',
    patch: edit(`sys/bus/pci/devices/${P0.downGpu}/resource`, (l, i) => (i === 15 ? l.slice(0, 29) + l.slice(37) : l)),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu)],
    based: [ok(P0.gpu, '>= 128 GiB')],
  },
  {
    name: 'skip: the GPU\'s resource cut short (its first 2 lines: a torn read or capture): unknown, never a small window',
    patch: cut(`sys/bus/pci/devices/${P0.gpu}/resource`, 2),
    bare: [unreadable],
    based: [unreadable],
  },
  {
    name: 'valid: the upstream port\'s resource cut short (6 of 17 lines): its windows unknown, never "outside"',
    patch: cut(`sys/bus/pci/devices/${P0.downGpu}/resource`, 6),
    subjects: [P0.gpu],
    bare: [ok(P0.gpu)],
    based: [ok(P0.gpu, '>= 128 GiB')],
  },
  {
    name: 'skip: no GPU on the node (bar1-na)',
    change: (n) => allDevices(HGX).filter((d) => d.kind === 'gpu').forEach((d) => detach(n, d.bdf)),
    bare: [na],
    based: [na],
  },
  {
    name: 'valid: DGX-1 (GPUs behind PLX switches), every window inside its port',
    from: DGX1,
    bare: [],
    based: [],
  },
]);
