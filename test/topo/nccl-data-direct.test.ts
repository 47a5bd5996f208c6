// ConnectX-8 Data Direct in the NCCL topology file (GB300 tray): each adapter's `<name>_dma` net under the DMA function
// whose VPD V3 is the adapter's, as NCCL's IB transport names and files it by default; none where the pair is unsure.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { parseNcclXml } from '../../src/topo/nccl-diff.js';
import { ncclTopo, renderNcclXml } from '../../src/topo/nccl-read.js';
import type { XmlNode } from '../../src/topo/nccl-xml.js';
import { buildTree, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as gb300 } from '../gen/topologies/gb300-cx8-dma-direct.js';
import { CLI } from '../helpers/paths.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const attr = (n: XmlNode, k: string): string | undefined => n.attrs.find(([a]) => a === k)?.[1];
/** Each net's name with the bus id of the element it lies under. */
function netsAt(n: XmlNode, busid = ''): string[] {
  const here = attr(n, 'busid') ?? busid;
  return n.name === 'net' ? [`${attr(n, 'name')}@${busid}`] : n.subs.flatMap((s) => netsAt(s, here));
}

async function topoOf(node: GenNode): Promise<{ nets: string[]; paths: string[] }> {
  const dir = await scratchDirAsync('gdrgate-nccldd-', TREE_TMP);
  await buildTree(dir, node);
  const host = new FsHost(dir);
  const { root, endpoints } = await ncclTopo(host, await buildInventory(host, { slurmdPidFiles: [] }));
  const read = parseNcclXml(renderNcclXml(root));
  if (!read.ok) throw new Error(read.error);
  return { nets: netsAt(read.value).sort(), paths: endpoints.map((e) => (e.own ?? e.sysPath).slice(-12)).sort() };
}

/** The tray with `change` applied to every device it picks. */
const edited = (pick: (d: GenDevice) => boolean, change: (d: GenDevice) => GenDevice): GenNode => {
  const walk = (d: GenDevice): GenDevice => {
    const c = pick(d) ? change(d) : d;
    return c.children ? { ...c, children: c.children.map(walk) } : c;
  };
  return { ...gb300, hostBridges: gb300.hostBridges.map((hb) => ({ ...hb, devices: hb.devices.map(walk) })) };
};
const isDma = (d: GenDevice): boolean => d.device === 0x2100;

t.test("the GB300 tray: each adapter's net at its PF, its _dma net at the DMA function beside its GPU", async (t) => {
  const { nets, paths } = await topoOf(gb300);
  // NVIDIA's guide (rdma_topo): NIC 0000:03:00.0 with GPU 0009:06:00.0 and DMA function 0009:03:00.0, and so on.
  t.same(nets, [
    'mlx5_0@0000:03:00.0', 'mlx5_0_dma@0009:03:00.0', 'mlx5_1@0002:03:00.0', 'mlx5_1_dma@0008:03:00.0',
    'mlx5_2@0010:03:00.0', 'mlx5_2_dma@0019:03:00.0', 'mlx5_3@0012:03:00.0', 'mlx5_3_dma@0018:03:00.0',
  ]);
  t.same(paths, ['0000:03:00.0', '0002:03:00.0', '0008:03:00.0', '0008:06:00.0', '0009:03:00.0', '0009:06:00.0', '0010:03:00.0', '0012:03:00.0', '0018:03:00.0', '0018:06:00.0', '0019:03:00.0', '0019:06:00.0'], 'the DMA functions recorded for the job\'s view too');
});

t.test('a pair that cannot be told is left to NCCL', async (t) => {
  const noV3 = await topoOf(edited(isDma, (d) => ({ ...d, vpd: { name: d.vpd!.name } })));
  t.same(noV3.nets, ['mlx5_0@0000:03:00.0', 'mlx5_1@0002:03:00.0', 'mlx5_2@0010:03:00.0', 'mlx5_3@0012:03:00.0'], 'no V3 on the DMA functions: no _dma net');
  const noVpd = await topoOf(edited(isDma, ({ vpd: _drop, ...d }) => d));
  t.same(noVpd.nets, noV3.nets, 'no vpd file: the same');
  // The DMA function beside GPU 0008:06:00.0 given adapter 0's V3 as well: two DMA functions claim mlx5_0.
  const twice = await topoOf(edited((d) => d.bdf === '0008:03:00.0', (d) => ({ ...d, vpd: { ...d.vpd!, v3: '5d1c0a7e-3b52-4e1f-9a4c-000000000000' } })));
  t.same(twice.nets, ['mlx5_0@0000:03:00.0', 'mlx5_1@0002:03:00.0', 'mlx5_2@0010:03:00.0', 'mlx5_2_dma@0019:03:00.0', 'mlx5_3@0012:03:00.0', 'mlx5_3_dma@0018:03:00.0'], 'mlx5_0 claimed twice, mlx5_1 by none: neither paired');
});

t.test("a snapshot of the tray keeps the ConnectX functions' VPD: its file has the same _dma nets", async (t) => {
  const dir = await scratchDirAsync('gdrgate-nccldd-snap-', TREE_TMP);
  const tree = path.join(dir, 'tree');
  await buildTree(tree, gb300);
  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8' });
  t.equal(run('snapshot', '--root', tree, '--out', 'tray.tar.gz').status, 0);
  const [live, kept] = [run('topo', '--nccl-xml', '--root', tree), run('topo', '--nccl-xml', '--root', 'tray.tar.gz')];
  t.same([live.status, kept.status], [0, 0]);
  t.equal(kept.stdout, live.stdout);
  t.equal(kept.stdout.split('\n').filter((l) => l.includes('_dma"')).length, 4);
});
