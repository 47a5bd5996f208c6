// /proc/cmdline is judged a kernel command line once, for every reader of it: the IOMMU reader and the PCI payload reader see the same fact.
import t from 'tap';
import { cpSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { unknown } from '../../src/model/fact.js';
import { H200 } from '../helpers/paths.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';

/** The H200 capture with its /proc/cmdline replaced: a copy per case, the capture's own line kept at its start. */
function tree(cmdline: string): string {
  const root = path.join(scratchDir('gdrgate-cmdline-', TREE_TMP), 'tree');
  cpSync(H200, root, { recursive: true, verbatimSymlinks: true });
  writeFileSync(path.join(root, 'proc/cmdline'), cmdline);
  return root;
}

const REAL = 'mitigations=auto console=ttyS0 quiet pci=realloc=off intel_iommu=on iommu=pt';
/** COMMAND_LINE_SIZE is at most 4096 on the architectures the gate runs on; the parsers allow 64 KiB. */
const MAX = 64 * 1024;

t.test('a line within the bound: both readers read it', async (t) => {
  // The file of MAX bytes, its newline included (the Host's bound on it: host.ts textMax).
  const line = `${REAL}${' x'.repeat((MAX - REAL.length) >> 1)}`.slice(0, MAX - 1);
  t.equal(line.length, MAX - 1);
  const inv = await buildInventory(new FsHost(tree(`${line}\n`)));
  t.same(inv.iommu.cmdline, { state: 'present', value: { intel_iommu: 'on', iommu: 'pt' } });
  t.same(inv.payload.cmdline, { state: 'present', value: { busPolicy: null, aspm: null } });
});

// A text the payload reader refuses as no kernel command line was read whole by the IOMMU reader, its parameters
// taken as the node's: 16 MiB of it cost the IOMMU reader 5-10 s and 700 MB in one synchronous stretch, past the deadline.
// Past 64 KiB the Host refuses the file (more than the kernel writes there), before any reader parses it.
const NOT_READ = '/proc/cmdline: larger than 64 KiB (more than the kernel writes there), not read';
const NOT_A_CMDLINE: [name: string, text: string, why: string][] = [
  ['one byte over 64 KiB', `${REAL}${'x'.repeat(MAX - REAL.length)}\n`, NOT_READ],
  ['just under 16 MiB (the largest text a Host hands over)', `${REAL} ${'a=b '.repeat((4 << 20) - 64)}\n`, NOT_READ],
  ['a control character', `${REAL}\u0001 quiet\n`, '/proc/cmdline: not a kernel command line (control characters, or longer than 64 KiB)'],
];

for (const [name, text, reason] of NOT_A_CMDLINE) {
  t.test(`${name}: not a kernel command line, for the IOMMU reader as for the payload reader`, async (t) => {
    const inv = await buildInventory(new FsHost(tree(text)));
    const why = unknown(reason);
    t.same(inv.payload.cmdline, why, 'payload');
    t.same(inv.iommu.cmdline, why, 'iommu');
  });
}
