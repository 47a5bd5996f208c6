// The live H200 capture with its GPU made a Root Complex Integrated Endpoint (PCIe Device/Port Type 9, as QEMU's q35
// shows a passed-through endpoint on pcie.0), its reserved Link registers left holding values: no link is judged.
import t from 'tap';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { Finding } from '../../src/model/finding.js';
import type { Inventory } from '../../src/model/inventory.js';
import { H200 } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';
import { captureFrom, runCheck } from './_trees.js';

const GPU = '0000:00:06.0';
const CONFIG = 'sys/devices/pci0000:00/0000:00:06.0/config';
/** PCIe capability at 0x60: Device/Port Type in bits 7:4 of +0x02, Link Control +0x10, Link Status +0x12. */
async function inventoryWith(edit: (b: Buffer) => void): Promise<Inventory> {
  const dir = scratchDir('gdrgate-rciep-', os.tmpdir());
  try {
    cpSync(H200, dir, { recursive: true, verbatimSymlinks: true });
    const b = readFileSync(path.join(dir, CONFIG));
    edit(b);
    writeFileSync(path.join(dir, CONFIG), b);
    return await buildInventory(new FsHost(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const rciep = (b: Buffer): void => void (b[0x62] = (b[0x62]! & 0x0f) | 0x90);
const row = (f: Finding): unknown[] => [f.status, f.code, f.subject, f.expected, f.actual];
const na = [['skip', 'link-na', GPU, undefined, undefined]];

t.test('as captured (Endpoint): pcie-link passes Gen5 x16', async (t) => {
  const inv = await inventoryWith(() => undefined);
  t.same(runCheck('pcie-link', inv, null).map(row), [['pass', 'link-ok', GPU, 'Gen5 x16', 'Gen5 x16']]);
});

t.test('type 9, Link registers as captured: no link judged (no pass of reserved registers)', async (t) => {
  const inv = await inventoryWith(rciep);
  const fs = runCheck('pcie-link', inv, null);
  t.same(fs.map(row), na);
  t.equal(fs[0]!.message, 'GPU H200: a Root Complex Integrated Endpoint (PCIe Device/Port Type 9) has no link to check');
  t.same(captureFrom(inv, 'virtualized').devices.find((d) => d.bdf === GPU)?.link, { speed: null, width: null }, 'a baseline taken there records no link');
});

t.test('type 9, Link Status reading x8 and Link Control 0x0002: no fail, no ASPM read from them', async (t) => {
  const inv = await inventoryWith((b) => {
    rciep(b);
    b.writeUInt16LE((b.readUInt16LE(0x72) & ~0x3f0) | (8 << 4), 0x72);
    b.writeUInt16LE(0x0002, 0x70);
  });
  t.same(runCheck('pcie-link', inv, null).map(row), na, 'never link-width-low');
  const p = runCheck('pcie-payload', inv, null).filter((f) => f.subject === GPU);
  t.same(p.map((f) => [f.status, f.code, f.message]), [['pass', 'payload-ok', 'GPU: MaxPayload 256 bytes, MaxReadReq 4096 bytes, ASPM Disabled (supports 256)']]);
});
