// The NCCL topology file on cards NCCL merges (dual-port ConnectX-7s, their SR-IOV VFs): one element per card, under
// the function NCCL files every port and VF under (net_ib/init.cc ncclIbGetPciPath), and within NCCL's 256 elements.
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { parseNcclXml } from '../../src/topo/nccl-diff.js';
import { ncclEndpoints, readNcclTopo } from '../../src/topo/nccl-read.js';
import { NCCL_MAX_NODES } from '../../src/topo/nccl-limits.js';
import { renderNcclXml, type XmlNode } from '../../src/topo/nccl-xml.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { sriovNode } from '../gen/topologies/hgx-h100-sriov.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const count = (n: XmlNode): number => 1 + n.subs.reduce((k, s) => k + count(s), 0);
const all = (n: XmlNode, name: string): XmlNode[] => [...(n.name === name ? [n] : []), ...n.subs.flatMap((s) => all(s, name))];
const attr = (n: XmlNode, k: string): string | undefined => n.attrs.find(([a]) => a === k)?.[1];

/** The file of the HGX H100 tree with `vfs` VFs on each of its 8 cards' two PFs, read back, and the Prolog's recorded paths. */
async function fileOf(vfs: number): Promise<{ xml: XmlNode; paths: string[] }> {
  const dir = await scratchDirAsync('gdrgate-ncclmerge-', TREE_TMP);
  await buildTree(dir, sriovNode(vfs));
  const host = new FsHost(dir);
  const inv = await buildInventory(host, { slurmdPidFiles: [] });
  const parsed = parseNcclXml(renderNcclXml(await readNcclTopo(host, inv)));
  if (!parsed.ok) throw new Error(parsed.error);
  return { xml: parsed.value, paths: ncclEndpoints(inv).map((e) => e.own ?? e.sysPath) };
}

t.test('dual-port cards without VFs: both ports one element, the net of the first port only', async (t) => {
  const { xml, paths } = await fileOf(0);
  const nics = all(xml, 'pci').filter((p) => all(p, 'nic').length > 0 && p.subs.some((s) => s.name === 'nic'));
  t.same(nics.map((p) => attr(p, 'busid')), ['0000:19:00.0', '0000:2b:00.0', '0000:3b:00.0', '0000:5e:00.0', '0000:9b:00.0', '0000:ac:00.0', '0000:bb:00.0', '0000:dc:00.0'], "each card's function 0");
  t.same(all(xml, 'pci').filter((p) => /\.1$/.test(attr(p, 'busid') ?? '')), [], 'no element for a second port: NCCL files it under function 0');
  t.same(all(xml, 'net').map((n) => n.attrs), Array.from({ length: 8 }, (_, i) => [['name', `mlx5_${i}`]]), 'the first ports by name; NCCL adds the second under the same element, port 2');
  t.equal(paths.filter((p) => /\.1$/.test(p)).length, 8, "the Prolog still records each second port's own path for the job's view");
  const cards = ['19', '2b', '3b', '5e', '9b', 'ac', 'bb', 'dc'];
  t.same(paths.slice(8).map((p) => p.slice(-12)), [...cards.map((b) => `0000:${b}:00.0`), ...cards.map((b) => `0000:${b}:00.1`)], 'adapters in numeric name order: mlx5_0 to mlx5_7, then mlx5_8 to mlx5_15, never mlx5_10 before mlx5_2');
});

t.test('127 VFs per PF (2,048 RDMA functions): the same file, within the table NCCL loads it into', async (t) => {
  const none = await fileOf(0);
  const full = await fileOf(127);
  t.same(full.xml, none.xml, 'VFs add nothing: NCCL merges them into function 0, which the file has');
  // Before: 6,163 elements, and every job's NCCL failed its topology load ("XML parser is limited to 256 nodes").
  t.equal(count(full.xml), 43);
  t.ok(count(full.xml) + 8 * 9 + 2 * 32 <= NCCL_MAX_NODES, 'with room for what NCCL adds: 8 GPUs, 32 adapters');
  t.equal(full.paths.length, 8 + 2048, 'every GPU and RDMA function recorded');
});
