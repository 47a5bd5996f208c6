// sysfs `resource` lines the kernel prints for a BAR or bridge window with no address (IORESOURCE_UNSET, DISABLED):
// never a window, never a bridge window that holds one. Real files, one line rewritten as the kernel leaves it.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bar1Window, insideWindow, type PciResource, parseResource, unassignedBars } from '../../src/parsers/pci-resource.js';
import { H200, shared } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const hex = (n: bigint): string => `0x${n.toString(16).padStart(16, '0')}`;
/** `text` with line `i` replaced by start, end, flags as resource_show prints them. */
const setLine = (text: string, i: number, start: bigint, end: bigint, flags: number): string =>
  text.split('\n').map((l, k) => (k === i ? `${hex(start)} ${hex(end)} ${hex(BigInt(flags))}` : l)).join('\n');
const p = (s: string): PciResource[] => {
  const r = parseResource(s);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};
const UNSET = 0x20000000;
const DISABLED = 0x10000000;

// The live H200's GPU: line 2 is its 256 GiB GPUDirect window (0x14220c). After __pci_read_base's "initial BAR value
// invalid", pci_assign_resource's "failed to assign" or pci_release_resource, the kernel keeps the size and the flags
// and sets IORESOURCE_UNSET with start 0, end size-1: resource_show prints 0x0 0x3fffffffff 0x2014220c.
const GPU = readFileSync(path.join(H200, 'sys/devices/pci0000:00/0000:00:06.0/resource'), 'utf8');
const gpuUnset = setLine(GPU, 2, 0n, (256n << 30n) - 1n, 0x14220c | UNSET);

t.test('H200: BAR at line 2 unassigned (IORESOURCE_UNSET, start 0, end size-1): no GPUDirect window, not a 256 GiB one at 0', async (t) => {
  t.equal(bar1Window(p(gpuUnset)), null, 'the largest 64-bit prefetchable BAR has no address: no window (BAR0 and BAR4, 16 and 32 MiB, are not it)');
  t.same(unassignedBars(p(gpuUnset)), [{ index: 2, start: 0n, end: (256n << 30n) - 1n, flags: 0x2014220c, size: 256n << 30n }]);
  t.same(unassignedBars(p(GPU)), [], 'the capture as taken: none unassigned');
  t.same(bar1Window(p(GPU)), { index: 2, start: 0x100000000000n, end: 0x103fffffffffn, flags: 0x14220c, size: 256n << 30n }, 'the capture as taken: line 2');
});

t.test('H200: an unassigned BAR smaller than the assigned window leaves the window as it is', async (t) => {
  const bar4 = setLine(GPU, 4, 0n, (32n << 20n) - 1n, 0x14220c | UNSET);
  t.same(bar1Window(p(bar4)), { index: 2, start: 0x100000000000n, end: 0x103fffffffffn, flags: 0x14220c, size: 256n << 30n });
});

t.test('H200: two BARs of the window\'s size, the first unassigned: the assigned one is the window', async (t) => {
  const two = setLine(setLine(GPU, 2, 0n, (256n << 30n) - 1n, 0x14220c | UNSET), 4, 0x100000000000n, 0x103fffffffffn, 0x14220c);
  t.same(bar1Window(p(two)), { index: 4, start: 0x100000000000n, end: 0x103fffffffffn, flags: 0x14220c, size: 256n << 30n });
  t.same(unassignedBars(p(two)).map((b) => b.index), [2]);
});

// A real switch tree (Supermicro SYS-4029GP-TRT2, hwloc's test suite): NEC vector engine 0000:1b:00.0, its 64 GiB
// 64-bit prefetchable BAR 0 at 0x39e000000000, inside PLX downstream port 0000:19:08.0's prefetchable window (line 15).
const TAR = shared('corpus/sysfs-real/32intel64-2p8co2t+8ve.tar.bz2');
const PORT = '32intel64-2p8co2t+8ve/sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:08.0';
t.test('PLX port and the vector engine below it', { skip: !existsSync(TAR) && `${TAR} not present` }, async (t) => {
  const dir = scratchDir('gdrgate-res-', os.tmpdir());
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync('/bin/tar', ['xjf', TAR, '-C', dir, `${PORT}/resource`, `${PORT}/0000:1b:00.0/resource`], { timeout: 60_000 });
  const port = readFileSync(path.join(dir, PORT, 'resource'), 'utf8');
  const ve = readFileSync(path.join(dir, PORT, '0000:1b:00.0/resource'), 'utf8');
  const w = bar1Window(p(ve));
  t.same(w, { index: 0, start: 0x39e000000000n, end: 0x39efffffffffn, flags: 0x14220c, size: 64n << 30n }, 'as captured: line 0, 64 GiB');
  t.equal(insideWindow(w!, p(port)), true, 'as captured: inside the port\'s window');

  const veUnset = setLine(ve, 0, 0n, (64n << 30n) - 1n, 0x14220c | UNSET);
  t.equal(bar1Window(p(veUnset)), null, 'the BAR unassigned: no window');
  // The window released (pci_release_resource) or never assigned: 0 .. size-1 with IORESOURCE_UNSET. An unassigned
  // BAR, 0 .. 64 GiB-1, lay "inside" it when the flags were not read.
  const portUnset = setLine(port, 15, 0n, (64n << 30n) - 1n, 0x102201 | UNSET);
  const bar = { index: 0, start: 0n, end: (64n << 30n) - 1n, flags: 0x14220c | UNSET };
  t.equal(insideWindow(bar, p(portUnset)), false, 'an unassigned window holds nothing, not even a BAR at 0');
  t.equal(insideWindow(w!, p(setLine(port, 15, 0x39e000000000n, 0x39efffffffffn, 0x102201 | DISABLED))), false, 'a window the port does not decode (IORESOURCE_DISABLED) holds nothing, whatever range it keeps');
  t.equal(insideWindow(w!, p(setLine(port, 15, 0x39e000000000n, 0x39efffffffffn, 0x102201 | UNSET))), false, 'nor one with IORESOURCE_UNSET');
});
