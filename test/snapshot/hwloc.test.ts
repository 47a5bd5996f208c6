// hwloc (HWLOC_FSROOT) on an unpacked snapshot sees the same PCI devices, bridges and NUMA placement as the inventory.
import { valueOf } from '../../src/model/fact.js';
import t from 'tap';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { buildTree, type GenNode } from '../gen/sysfs-tree.js';
import { node as hgx } from '../gen/topologies/sglang30401-hgx-h100.js';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { numaOf } from '../../src/topo/classify.js';
import { cli } from '../helpers/cli.js';
import { writeCpuTopology } from './cpu-tree.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const LSTOPO = 'lstopo-no-graphics';
const have = spawnSync(LSTOPO, ['--version'], { encoding: 'utf8' }).status === 0;
if (!have && process.env.CI) t.fail(`${LSTOPO} is required in CI (apt-get install -y hwloc-nox)`);

interface HwObj {
  readonly attrs: Record<string, string>;
  readonly parent: HwObj | null;
  readonly kids: HwObj[];
}

/** hwloc's XML is nested <object …> elements: enough structure for busids, classes, ancestors and nodesets. */
function parseHwlocXml(xml: string): HwObj[] {
  const all: HwObj[] = [];
  const stack: HwObj[] = [];
  for (const m of xml.matchAll(/<object\b([^>]*?)(\/?)>|<\/object>/g)) {
    if (m[0] === '</object>') {
      stack.pop();
      continue;
    }
    const attrs = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!]));
    const o: HwObj = { attrs, parent: stack.at(-1) ?? null, kids: [] };
    o.parent?.kids.push(o);
    all.push(o);
    if (m[2] !== '/') stack.push(o);
  }
  return all;
}

/** NUMA nodes of the nearest ancestor with a nodeset (I/O objects hang below the Package/Group holding their CPUs). */
function numaNodes(o: HwObj): number[] {
  for (let p = o.parent; p; p = p.parent) {
    const ns = p.attrs.nodeset;
    if (ns === undefined) continue;
    const bits = BigInt('0x' + ns.replace(/0x|,/g, '').padStart(1, '0'));
    return [...Array(64).keys()].filter((i) => (bits >> BigInt(i)) & 1n);
  }
  return [];
}

/** The HGX node plus an NVMe drive on its own root port of socket 1: a device no check reads, which hwloc still sees. */
const node: GenNode = {
  ...hgx,
  hostBridges: [
    ...hgx.hostBridges,
    { domainBus: '0000:e0', numaNode: 1, devices: [{ bdf: '0000:e0:01.0', kind: 'rootport', speed: 16, width: 4, children: [{ bdf: '0000:e1:00.0', kind: 'other', vendor: 0x144d, device: 0xa80a, classCode: 0x010802, speed: 16, width: 4 }] }] },
  ],
};

t.test('hwloc on an unpacked snapshot agrees with the inventory on PCI devices, bridges and NUMA placement', { skip: !have && `${LSTOPO} not installed (apt-get install -y hwloc-nox); CI fails instead` }, async (t) => {
  const dir = await scratchDirAsync('gdrgate-hwloc-', TREE_TMP);
  const root = path.join(dir, 'node');
  await buildTree(root, node);
  await writeCpuTopology(root, node);
  const file = path.join(dir, 'node.tar.gz');
  t.equal(cli(['snapshot', '--root', root, '--out', file]).code, 0);
  const unpacked = path.join(dir, 'unpacked');
  spawnSync('mkdir', [unpacked]);
  t.equal(spawnSync('tar', ['-xzf', file, '-C', unpacked]).status, 0);
  // -x86: hwloc's CPUID backend would otherwise mix this machine's caches into the fake root's CPUs.
  const hw = spawnSync(LSTOPO, ['--whole-io', '--of', 'xml'], { encoding: 'utf8', env: { ...process.env, HWLOC_FSROOT: unpacked, HWLOC_COMPONENTS: '-x86' } });
  t.equal(hw.status, 0, hw.stderr);
  t.notMatch(hw.stderr, /invalid information|aborting/, 'hwloc found everything it needs in the snapshot');
  const objs = parseHwlocXml(hw.stdout);
  const byBdf = new Map(objs.filter((o) => o.attrs.pci_busid).map((o) => [o.attrs.pci_busid!, o]));
  const inv = await buildInventory(new FsHost(unpacked));
  const listed = await new FsHost(unpacked).list('/sys/bus/pci/devices');
  t.same([...byBdf.keys()].sort(), listed.ok ? listed.value : [], 'hwloc sees every PCI function of the snapshot, the NVMe drive included');
  t.same(numaNodes(byBdf.get('0000:e1:00.0')!), [1], 'the NVMe drive sits on socket 1');
  for (const bdf of [...inv.gpus.map((g) => g.bdf), ...inv.nics.map((n) => valueOf(n.bdf)!)]) {
    const o = byBdf.get(bdf);
    const d = inv.pci.get(bdf)!;
    if (!t.ok(o, `hwloc has ${bdf}`) || !o) continue;
    t.equal(o.attrs.type, 'PCIDev', `${bdf} is a PCI device`);
    t.equal(parseInt(o.attrs.pci_type!.slice(0, 4), 16), valueOf(d.classCode)! >> 8, `${bdf} class`);
    t.same(numaNodes(o), [numaOf(inv, d)], `${bdf} NUMA node ${numaOf(inv, d)}`);
    const up: string[] = [];
    for (let p = o.parent; p && p.attrs.type === 'Bridge'; p = p.parent) if (p.attrs.pci_busid) up.unshift(p.attrs.pci_busid);
    t.same(up, d.bridges, `${bdf} parent bridges ${d.bridges.join(' > ')}`);
  }
  for (const n of inv.nics) {
    const os = byBdf.get(valueOf(n.bdf)!)?.kids.find((k) => k.attrs.type === 'OSDev');
    t.equal(os?.attrs.name, n.name, `${valueOf(n.bdf)} is ${n.name} for hwloc too`);
  }
  t.equal(new Set(inv.gpus.map((g) => numaOf(inv, inv.pci.get(g.bdf)!))).size, 2, 'two sockets carry GPUs');
});
