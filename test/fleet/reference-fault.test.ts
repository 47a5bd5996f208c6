// A fault only the universal rules see (an IOMMU group split) on whichever node the class happens to take as its
// reference: the faulty node is flagged, the others agree, exit 1 (a fault on the reference was invisible).
import t from 'tap';
import path from 'node:path';
import { compareView } from '../../src/compare/view.js';
import { readNode } from '../../src/engine/evaluate.js';
import { buildFleetReport } from '../../src/fleet/report.js';
import { allDevices, buildTree, type GenNode } from '../gen/sysfs-tree.js';
import { node as GB300 } from '../gen/topologies/gb300-cx8-dma-direct.js';

const NAMES = ['gpu0001', 'gpu0002', 'gpu0003', 'gpu0004'];

async function views(dir: string, split: string) {
  const out = [];
  for (const name of NAMES) {
    const tree = structuredClone(GB300) as GenNode;
    // The ConnectX-8's DMA function in an IOMMU group of its own: no fact of compare's differs, only the rules flag it.
    if (name === split) allDevices(tree).find((d) => d.driver === 'mlx5_data_direct')!.iommuGroup = 99;
    const root = path.join(dir, `${split}-${name}`);
    await buildTree(root, { ...tree, hostname: name });
    out.push({ node: name, view: compareView((await readNode({ root, baseline: null, node: name, trust: [] })).inv) });
  }
  return out;
}

for (const split of ['gpu0001', 'gpu0003']) {
  t.test(`the split on ${split}: flagged, critical, whichever node is the reference`, async (t) => {
    const nodes = await views(t.testdir(), split);
    t.equal(nodes[0]!.view.fingerprint, nodes[1]!.view.fingerprint, 'the fingerprint leaves the finding out: every node is alike there');
    const r = buildFleetReport({ dir: 'fleet', nodes, classOf: () => 'gb300', stats: [], missing: [], problems: [] });
    t.strictSame(r.nodes.map((v) => [v.node, v.status, v.worst]), [[split, 'differs', 'critical'], ...NAMES.filter((n) => n !== split).map((n) => [n, 'ok', null])]);
    t.strictSame(r.nodes[0]!.differences.map((d) => [d.area, d.subject, d.a, d.b]), [['iommu', '0009:03:00.0', 'group 99', 'not flagged on the reference (iommu-mode iommu-group-split)']]);
    t.strictSame(r.classes[0]!.facts.map((f) => [f.area, f.agree, f.tie, f.deviations.map((d) => d.node)]), [['iommu', 3, false, [split]]]);
    t.not(r.classes[0]!.reference, split, 'the reference is a node without the fault');
    t.equal(r.exitCode, 1);
  });
}
