// `gdrgate topo --json` against the schema its --help names, on the bundled real capture and the rebuilt trees.
import t from 'tap';
import { buildTree, type GenNode } from '../gen/sysfs-tree.js';
import * as hgx from '../gen/topologies/sglang30401-hgx-h100.js';
import * as paddle from '../gen/topologies/paddle-8xp40-plx-cascade.js';
import { cli } from '../helpers/cli.js';
import { H200 } from '../helpers/paths.js';
import { validate } from '../helpers/schema.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';

t.test('--help names the schema the output follows', async (t) => {
  const r = cli(['topo', '--help']);
  t.equal(r.code, 0);
  t.equal(r.stdout, [
    'gdrgate topo',
    '',
    'print the GPU↔NIC PCIe matrix computed from sysfs, in nvidia-smi topo -m layout',
    '',
    'Options:',
    '      --version   Show version number                                  [boolean]',
    '      --root      read the node under this directory (a capture) instead of /',
    '                                                         [string] [default: "/"]',
    '      --json      print the matrix as JSON (schemas/topo.schema.json)',
    '                                                      [boolean] [default: false]',
    '      --nccl-xml  print the topology in NCCL\'s XML format (for NCCL_TOPO_FILE)',
    '                                                      [boolean] [default: false]',
    '  -h, --help      Show help                                            [boolean]',
    '',
  ].join('\n'));
});

const roots: { name: string; root: (dir: () => string) => Promise<string> }[] = [
  { name: 'the bundled H200 capture', root: async () => H200 },
  ...([hgx, paddle] as { source: string; node: GenNode }[]).map((g) => ({
    name: g.source,
    root: async (mkdir: () => string) => {
      const dir = mkdir();
      await buildTree(dir, g.node);
      return dir;
    },
  })),
];

for (const r of roots) {
  t.test(`topo --json validates: ${r.name}`, async (t) => {
    const root = await r.root(() => scratchDir('gdrgate-topojson-', TREE_TMP));
    const run = cli(['topo', '--root', root, '--json']);
    t.equal(run.code, 0, run.stderr);
    const data = JSON.parse(run.stdout) as { command: string; gpus: unknown[] };
    t.same(validate('topo', data), []);
    t.equal(data.command, 'topo');
    t.ok(data.gpus.length >= 1);
  });
}
