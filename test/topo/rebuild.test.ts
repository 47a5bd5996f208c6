// Cell-by-cell: four real `nvidia-smi topo -m` outputs against the matrix computed from sysfs trees rebuilt for
// their machines (test/gen/topologies). PCIe classes only: NV# cells are NVLink, which sysfs does not show.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { nicNames, normalizeClass, parseNvsmiTopo } from '../../src/parsers/nvsmi-topo.js';
import { topoMatrix } from '../../src/topo/matrix.js';
import { buildTree, type GenNode } from '../gen/sysfs-tree.js';
import * as dgx1 from '../gen/topologies/dgx1v-8xv100-4nic.js';
import * as paddle from '../gen/topologies/paddle-8xp40-plx-cascade.js';
import * as hgx from '../gen/topologies/sglang30401-hgx-h100.js';
import * as v100 from '../gen/topologies/v100sxm2-4gpu-4nic-pairs.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const TOPOLOGIES: { source: string; node: GenNode }[] = [hgx, paddle, v100, dgx1];

for (const { source, node } of TOPOLOGIES) {
  t.test(source, async (t) => {
    const dir = await scratchDirAsync('gdrgate-rebuild-', TREE_TMP);
    await buildTree(dir, node);
    const inv = await buildInventory(new FsHost(dir), { slurmdPidFiles: [] });
    t.same(inv.notes, [], 'the rebuilt tree reads without notes');
    const m = topoMatrix(inv);
    const real = parseNvsmiTopo(readFileSync(fileURLToPath(new URL(`../fixtures/nvidia_smi_topo/${source}`, import.meta.url)), 'utf8'));
    t.same(real.problems, []);

    // Real label → computed label: GPUs by index (both in PCI bus order), NICs by device name, never by column order.
    const names = nicNames(real);
    const realGpus = real.columns.filter((c) => /^GPU\d+$/.test(c));
    t.same(m.gpus.map((g) => g.label), realGpus, 'same GPUs');
    t.same(m.nics.map((n) => n.name).sort(), Object.values(names).sort(), 'same NICs by name');
    const label = new Map<string, string>(realGpus.map((g) => [g, g]));
    for (const [col, name] of Object.entries(names)) label.set(col, m.nics.find((n) => n.name === name)?.label ?? `?${name}`);

    const notCompared: string[] = [];
    let compared = 0;
    for (const row of real.rows) {
      for (const col of real.columns) {
        const want = row.cells[col];
        if (want === undefined || col === row.label) continue;
        if (/^NV\d+$/.test(want)) {
          if (row.label < col) notCompared.push(`${row.label}/${col}=${want}`);
          continue;
        }
        t.equal(m.cell(label.get(row.label)!, label.get(col)!), normalizeClass(want), `${row.label}/${col}`);
        compared++;
      }
      if (row.cpuAffinity !== null) t.equal(m.cpuAffinity(label.get(row.label)!), row.cpuAffinity, `${row.label} CPU Affinity`);
      if (row.numaAffinity !== null) t.equal(m.numaAffinity(label.get(row.label)!), row.numaAffinity, `${row.label} NUMA Affinity`);
    }
    t.ok(compared > 0, `${compared} PCIe cells compared`);
    t.comment(`not compared (NVLink, not in sysfs): ${notCompared.length ? notCompared.join(' ') : 'none'}`);
  });
}
