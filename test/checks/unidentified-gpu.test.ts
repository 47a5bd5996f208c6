// A GPU whose sysfs `vendor` cannot be read (empty, a FIFO, a cut read) is a PCI function that cannot be told, never
// "no GPU": on a GH200 (its one GPU on a Grace root port) device-inventory must not pass "no NVIDIA GPU on the PCI
// bus" and pcie-acs must not fail the class's Direct NIC platform as classic; both could not tell, so both skip.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Finding } from '../../src/model/finding.js';
import { node as GH200 } from '../gen/topologies/gh200-cx7.js';
import { baselineOf, inventoryOf, type Patch, put, runCheck } from './_trees.js';

const GPU = '0009:01:00.0';
const VENDOR = `sys/bus/pci/devices/${GPU}/vendor`;
/** The file replaced by a FIFO with no writer (O_NONBLOCK: read at once, not a regular file). */
const fifo = (kpath: string): Patch => async (root) => {
  rmSync(path.join(root, kpath));
  if (spawnSync('/usr/bin/mkfifo', [path.join(root, kpath)]).status !== 0) throw new Error('mkfifo failed');
};
const row = (f: Finding): [string, string, string] => [f.status, f.code, f.subject];

for (const [label, patch] of [
  ['empty ("\\n")', put(VENDOR, '\n')],
  ['cut short (no newline)', put(VENDOR, '0x10')],
  ['a FIFO', fifo(VENDOR)],
] as const) {
  t.test(`GH200, the GPU's vendor ${label}`, async (t) => {
    const inv = await inventoryOf(structuredClone(GH200), patch);
    t.same(inv.gpus.map((g) => g.bdf), [], 'no GPU identified');
    t.same(inv.unidentified, [GPU], 'the GPU function is unidentified');

    const bare = runCheck('device-inventory', inv, null).filter((f) => f.subject === 'node');
    t.same(bare.map(row), [['skip', 'inventory-unknown', 'node']], 'no baseline: "no GPU" is not told');
    t.equal(bare[0]!.message, `whether an NVIDIA GPU is on the PCI bus cannot be told: what PCI function ${GPU} is could not be read (its sysfs link, class or vendor)`);

    const base = await baselineOf(structuredClone(GH200));
    t.equal(base.acsPolicy, 'direct-nic', 'the reference is a Direct NIC node (GPU on a Grace root port)');
    const acs = runCheck('pcie-acs', inv, base);
    t.same(acs.map(row), [['skip', 'acs-platform-unexpected', 'node']], 'with the reference: not a fail "classic"');
    t.equal(acs[0]!.message, `Direct NIC platform, but PCI function ${GPU} could not be told (its place, class or vendor unread), so the Direct NIC complexes cannot be counted: no mask can be told`);
    t.same(runCheck('device-inventory', inv, base).filter((f) => f.subject === GPU).map(row), [['skip', 'inventory-unknown', GPU]], 'the GPU of the reference: unknown, not missing');
  });
}
