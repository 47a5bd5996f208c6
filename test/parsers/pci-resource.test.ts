// sysfs `resource` on the real H200 capture: the GPUDirect window is line 2 and equals nvidia-smi -q's BAR1 Total.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BRIDGE_LINES, bar1Window, insideWindow, type PciResource, parseResource, shrinkResource, sizeText } from '../../src/parsers/pci-resource.js';
import { H200 } from '../helpers/paths.js';

const GPU = path.join(H200, 'sys/devices/pci0000:00/0000:00:06.0/resource');
const text = readFileSync(GPU, 'utf8');
const NVSMI = readFileSync(path.join(H200, 'capture/cmd/nvidia-smi_q.txt'), 'utf8');

t.test('H200 resource: 7 lines (BARs and ROM; that kernel writes no SR-IOV lines), BAR0 and BAR3 64-bit prefetchable too, the window is line 2 (256 GiB)', async (t) => {
  const r = parseResource(text);
  if (!r.ok) return t.fail(r.error);
  t.equal(r.value.length, 7);
  t.equal(r.value[0]!.flags, 0x14220c, 'BAR0 is 64-bit prefetchable (why the window is not at line 1)');
  const w = bar1Window(r.value);
  t.same(w, { index: 2, start: 0x100000000000n, end: 0x103fffffffffn, flags: 0x14220c, size: 256n << 30n });
  t.equal(sizeText(w!.size), '256 GiB');
  t.same([sizeText(1536n), sizeText((256n << 20n) + 4096n), sizeText(32n << 20n)], ['1536 B', '262148 KiB', '32 MiB'], 'the largest unit that divides the size, never rounded');
});

t.test('equals nvidia-smi -q "BAR1 Memory Usage: Total" of the same capture', async (t) => {
  const mib = /BAR1 Memory Usage\s*\n\s*Total\s*:\s*(\d+) MiB/.exec(NVSMI);
  t.ok(mib, 'nvidia-smi -q has a BAR1 Total');
  const r = parseResource(text);
  t.equal(r.ok && bar1Window(r.value)!.size, BigInt(mib![1]!) << 20n);
});

t.test('malformed, empty, unassigned and 32-bit inputs', async (t) => {
  t.same(parseResource(''), { ok: false, error: 'resource is empty' });
  t.same(parseResource('0x0 0x1\n'), { ok: false, error: 'resource line 0: "0x0 0x1" is not "start end flags"' });
  const zeros = parseResource('0x0000000000000000 0x0000000000000000 0x0000000000000000\n'.repeat(13));
  t.equal(zeros.ok && bar1Window(zeros.value), null, 'nothing assigned: no window');
  const bit32 = parseResource('0x00000000e0000000 0x00000000efffffff 0x0000000000042208\n' + '0x0000000000000000 0x0000000000000000 0x0000000000000000\n'.repeat(6));
  t.equal(bit32.ok && bar1Window(bit32.value), null, 'a 32-bit prefetchable BAR (no IORESOURCE_MEM_64) is not taken');
});

// A file shorter than resource_show writes (a read cut short, a torn capture) hid what its missing lines held: it was
// read as "no such BAR" (bar1-small, bar1-none) or "no such window" (bar1-outside), failing a healthy GPU.
t.test('cut short: fewer lines than the kernel writes is refused (7 for any function, 11 for a bridge with its windows)', async (t) => {
  const lines = text.split('\n').filter(Boolean);
  t.same(lines.slice(0, 6).map((_, k) => parseResource(lines.slice(0, k + 1).join('\n') + '\n')), [1, 2, 3, 4, 5, 6].map((n) => ({ ok: false, error: `resource has ${n} line(s), fewer than the kernel writes (7): cut short` })));
  t.equal(parseResource(text).ok, true, 'the whole file (7 lines)');
  const bridge = '0x0000000000000000 0x0000000000000000 0x0000000000000000\n';
  t.same([7, 10].map((n) => parseResource(bridge.repeat(n), BRIDGE_LINES)), [7, 10].map((n) => ({ ok: false, error: `resource has ${n} line(s), fewer than the kernel writes (11, a bridge with its windows): cut short` })));
  t.same([11, 17, 18].map((n) => parseResource(bridge.repeat(n), BRIDGE_LINES).ok), [true, true, true], 'without and with SR-IOV lines, and a vendor kernel\'s 18');
});

t.test('a bridge window holds the window only when it spans it (lines after BARs and ROM)', async (t) => {
  const w = { index: 2, start: 0x100000000000n, end: 0x103fffffffffn, flags: 0x14220c };
  const line = (s: bigint, e: bigint, f: number): string => `0x${s.toString(16).padStart(16, '0')} 0x${e.toString(16).padStart(16, '0')} 0x${f.toString(16).padStart(16, '0')}\n`;
  const bridge = (s: bigint, e: bigint): string => line(0n, 0n, 0).repeat(15) + line(s, e, 0x102201) + line(0n, 0n, 0);
  const p = (s: string): PciResource[] => {
    const r = parseResource(s);
    if (!r.ok) throw new Error(r.error);
    return r.value;
  };
  t.ok(insideWindow(w, p(bridge(0x100000000000n, 0x1040ffffffffn))));
  t.notOk(insideWindow(w, p(bridge(0x100000000000n, 0x101fffffffffn))), 'half outside');
  t.notOk(insideWindow(w, p(line(0x100000000000n, 0x1040ffffffffn, 0x14220c) + line(0n, 0n, 0).repeat(10))), "a bridge's own BAR 0 is no window");
});

t.test('shrinkResource (the drill) ends the window bytes after its start and leaves every other line', async (t) => {
  const out = shrinkResource(text, 2, 256n << 20n);
  const r = parseResource(out);
  t.same(r.ok && bar1Window(r.value), { index: 2, start: 0x100000000000n, end: 0x10000fffffffn, flags: 0x14220c, size: 256n << 20n }, 'line 2 is still the largest, now 256 MiB');
  const lines = out.split('\n');
  t.equal(lines[2], '0x0000100000000000 0x000010000fffffff 0x000000000014220c');
  t.same(lines.filter((_, i) => i !== 2), text.split('\n').filter((_, i) => i !== 2));
});
