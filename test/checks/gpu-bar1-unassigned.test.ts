// The live H200 capture (a VM: its GPU on a root bus) with the GPUDirect BAR unassigned as the kernel prints it
// (IORESOURCE_UNSET, start 0, end size-1): gpu-bar1 fails bar1-none, compare says none, a baseline records no size.
import t from 'tap';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bar1View } from '../../src/compare/bar1.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { H200 } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';
import { captureFrom, runCheck } from './_trees.js';

const GPU = '0000:00:06.0';
const FILE = 'sys/devices/pci0000:00/0000:00:06.0/resource';

async function inventoryWith(line2: string | null): Promise<Awaited<ReturnType<typeof buildInventory>>> {
  const dir = scratchDir('gdrgate-bar1-', os.tmpdir());
  try {
    cpSync(H200, dir, { recursive: true, verbatimSymlinks: true });
    if (line2 !== null) {
      const text = readFileSync(path.join(dir, FILE), 'utf8');
      writeFileSync(path.join(dir, FILE), text.split('\n').map((l, i) => (i === 2 ? line2 : l)).join('\n'));
    }
    return await buildInventory(new FsHost(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const row = (f: { status: string; code: string; subject: string; expected?: string; actual?: string }): unknown[] => [f.status, f.code, f.subject, f.expected, f.actual];

t.test('as captured: pass, 256 GiB on a root bus', async (t) => {
  const inv = await inventoryWith(null);
  t.same(runCheck('gpu-bar1', inv, null).map(row), [['pass', 'bar1-ok', GPU, 'a 64-bit prefetchable BAR', '256 GiB']]);
  t.same(bar1View(inv, GPU), { known: true, size: String(256n << 30n) });
});

t.test('line 2 unassigned (0x0 0x3fffffffff 0x2014220c): bar1-none, never a pass of a 256 GiB window at 0', async (t) => {
  const inv = await inventoryWith('0x0000000000000000 0x0000003fffffffff 0x000000002014220c');
  const fs = runCheck('gpu-bar1', inv, null);
  t.same(fs.map(row), [['fail', 'bar1-none', GPU, 'a 64-bit prefetchable BAR', 'none']]);
  t.equal(fs[0]!.message, 'resource line 2 (256 GiB, 64-bit prefetchable) has no address (IORESOURCE_UNSET): the BIOS or kernel could not assign it');
  t.same(bar1View(inv, GPU), { known: true, size: null }, 'compare: none');
  t.equal(captureFrom(inv, 'virtualized').devices.find((d) => d.bdf === GPU)?.bar1, undefined, 'a baseline taken there records no window size');
});
