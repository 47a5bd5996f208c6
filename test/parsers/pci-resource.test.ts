// sysfs `resource` on the real H200 capture: the GPUDirect window is line 2 and equals nvidia-smi -q's BAR1 Total.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { bar1Window, insideWindow, type PciResource, parseResource, shrinkResource, sizeText } from '../../src/parsers/pci-resource.js';
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
  t.match(w, { index: 2, start: 0x100000000000n, end: 0x103fffffffffn, size: 256n << 30n });
  t.equal(sizeText(w!.size), '256 GiB');
});

t.test('equals nvidia-smi -q "BAR1 Memory Usage: Total" of the same capture', async (t) => {
  const mib = /BAR1 Memory Usage\s*\n\s*Total\s*:\s*(\d+) MiB/.exec(NVSMI);
  t.ok(mib, 'nvidia-smi -q has a BAR1 Total');
  const r = parseResource(text);
  t.equal(r.ok && bar1Window(r.value)!.size, BigInt(mib![1]!) << 20n);
});

t.test('malformed, empty, unassigned and 32-bit inputs', async (t) => {
  t.match(parseResource(''), { ok: false, error: /empty/ });
  t.match(parseResource('0x0 0x1\n'), { ok: false, error: /line 0/ });
  const zeros = parseResource('0x0000000000000000 0x0000000000000000 0x0000000000000000\n'.repeat(13));
  t.equal(zeros.ok && bar1Window(zeros.value), null, 'nothing assigned: no window');
  const bit32 = parseResource('0x00000000e0000000 0x00000000efffffff 0x0000000000042208\n');
  t.equal(bit32.ok && bar1Window(bit32.value), null, 'a 32-bit prefetchable BAR (no IORESOURCE_MEM_64) is not taken');
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
  t.notOk(insideWindow(w, p(line(0x100000000000n, 0x1040ffffffffn, 0x14220c))), "a bridge's own BAR 0 is no window");
});

t.test('shrinkResource (the drill) ends the window bytes after its start and leaves every other line', async (t) => {
  const out = shrinkResource(text, 2, 256n << 20n);
  const r = parseResource(out);
  t.match(r.ok && bar1Window(r.value), { index: 2, size: 256n << 20n }, 'line 2 is still the largest, now 256 MiB');
  const lines = out.split('\n');
  t.equal(lines[2], '0x0000100000000000 0x000010000fffffff 0x000000000014220c');
  t.same(lines.filter((_, i) => i !== 2), text.split('\n').filter((_, i) => i !== 2));
});
