// NCCL's topology file on a node whose second PCI segment is numbered above 0xffff (10000, as hwloc's real
// 2pa-pcidomain32bits capture, a KVM guest, names it, with numa_node -1 on every function): each element says what
// it says in the tree with that segment at 0000, only the bus ids renamed. NCCL reads a device's numa_node and its
// port's max_link_* from the device's directory whatever its name (xml.cc ncclTopoGetXmlFromSys); only a host
// bridge's directory has none. (Its parent rule, checkBDFFormat, takes four domain digits alone, so the elements of
// the segment hang from the CPU: the shape differs, not the attributes.)
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { readNcclTopo } from '../../src/topo/nccl-read.js';
import { renderNcclXml } from '../../src/topo/nccl-xml.js';
import { buildTree, type GenDevice, type GenNode } from '../gen/sysfs-tree.js';
import { node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

/** The two-socket tree as the 2pa guest's firmware left it: no NUMA node for any function; its Skylake CPU's modalias. */
const NO_NUMA: GenNode = {
  ...TWO,
  cpuModalias: 'cpu:type:x86,ven0000fam0006mod005E:feature:,0000,0001',
  hostBridges: TWO.hostBridges.map((hb) => ({ ...hb, numaNode: -1 })),
};
/** Socket 1's functions (buses 97-9b) in segment 10000. */
const wide = (s: string): string => s.replace(/(?<![0-9a-f])0000:(9[7-9a-b]):/g, '10000:$1:');
const move = (d: GenDevice): GenDevice => ({ ...d, bdf: wide(d.bdf), children: d.children?.map(move) });
const WIDE: GenNode = { ...NO_NUMA, hostBridges: NO_NUMA.hostBridges.map((hb, i) => (i === 1 ? { ...hb, domainBus: '10000:97', devices: hb.devices.map(move) } : hb)) };

const fileOf = async (n: GenNode): Promise<string> => {
  const dir = await scratchDirAsync('gdrgate-ncclwide-', TREE_TMP);
  await buildTree(dir, n);
  const host = new FsHost(dir);
  return renderNcclXml(await readNcclTopo(host, await buildInventory(host, { slurmdPidFiles: [] })));
};

/** Each element's opening tag by what names it, its indentation (its depth) set aside. */
const tags = (xml: string): Map<string, string> => new Map(xml.split('\n').filter((l) => /<(cpu|pci|net) /.test(l)).map((l) => [/(?:busid|numaid|name)="[^"]*"/.exec(l)![0], l.trim()] as const));

t.test('a segment above 0xffff: each element as in the same tree at 0000, renamed', async (t) => {
  const [narrow, moved] = await Promise.all([fileOf(NO_NUMA), fileOf(WIDE)]);
  t.same([...tags(moved).values()].filter((l) => l.startsWith('<cpu')), ['<cpu numaid="-1" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="94">'], 'one cpu, numa_node -1 as NCCL reads it, no cpumap');
  const want = new Map([...tags(narrow)].map(([k, v]) => [wide(k), wide(v)]));
  t.same([...tags(moved)].map(([k, v]) => [k, v === want.get(k) ? 'same' : v]), [...tags(moved).keys()].map((k) => [k, 'same']), 'every element as in the tree at 0000');
  // Socket 0: its switch, GPU, adapter and net; the segment's GPU, adapter and net hang from the cpu (no switch
  // element: NCCL stops at the port's bus id); one cpu.
  t.equal(tags(moved).size, 8, 'every element compared');
});
