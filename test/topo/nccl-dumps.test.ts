// Element by element: a real NCCL topology dump against gdrgate's file for the PCI tree rebuilt from it (test/gen).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { diffNcclXml, expectedBecause, FROM_ELSEWHERE, parseNcclXml } from '../../src/topo/nccl-diff.js';
import { ncclEndpoints, prefill, readNcclTopo, speedStyleOf } from '../../src/topo/nccl-read.js';
import { ncclChain } from '../../src/topo/nccl-xml.js';
import * as hgx from '../gen/topologies/sglang30401-hgx-h100.js';
import { renderNcclXml } from '../../src/topo/nccl-xml.js';
import { buildTree, type GenNode } from '../gen/sysfs-tree.js';
import * as ibm from '../gen/topologies/ibm-gx3d-8xh100-vsi.js';
import * as nebius from '../gen/topologies/nebius-h100-vm.js';
import * as simai from '../gen/topologies/simai-hgx-8xa100-cx6dx-bond.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

/**
 * What a dump holds that does not come from the PCI tree, so gdrgate leaves it out and NCCL fills it at run time
 * (a file that stated it would override what NCCL finds), as src/topo/nccl-diff.ts lists it, checked here:
 * - cpu host_hash: a hash of the host name and boot id; NCCL 2.27+ rewrites it on load, older ones only tell hosts apart by it.
 * - gpu (dev, sm, rank, gdr, mlopart) and its nvlink/c2c children: NVML, CUDA and the communicator.
 * - net dev, speed, port, latency, guid, maxconn, gdr (and net/coll/gin/rma flags): the network plugin's properties
 *   (IB verbs). A file's dev, speed or port would stand over NCCL's own (it fills only what is missing), and its port
 *   numbers the functions it merges into one device.
 */
t.test('the attributes set aside as not from the PCI tree', async (t) => {
  t.same(Object.fromEntries(Object.entries(FROM_ELSEWHERE).map(([k, v]) => [k, v.attrs])), {
    cpu: ['host_hash'], gpu: 'all', nvlink: 'all', c2c: 'all', net: ['dev', 'speed', 'port', 'latency', 'guid', 'maxconn', 'gdr', 'net', 'coll', 'gin', 'rma'],
  });
});

/**
 * Per dump, what it holds that is not from the PCI tree (so gdrgate's file leaves it out), besides the list above:
 * - IBM gx3d (NCCL 2.2x dump, as published): cpu host_hash, gpu/nvlink, the nets' latency/guid/maxconn/gdr.
 * - SimAI HGX A100 (a dump by an NCCL older than host_hash): gpu/nvlink, the nets' latency/guid/maxconn/gdr. Its
 *   GPU ids and links predate NCCL 2.30's NVML reads: they come from sysfs and are compared.
 * - Nebius H100 VM (a dump trimmed by hand for NCCL_TOPO_FILE: gpu elements, guids and host_hash taken out): the
 *   nets' latency/maxconn/gdr and coll (CollNet: the SHARP plugin's property, not the tree's).
 */
const DUMPS: { source: string; node: GenNode; aside: string[]; gpus: number; nvlinks: number }[] = [
  { source: ibm.source, node: ibm.node, aside: ['cpu.host_hash', 'gpu', 'net.dev', 'net.gdr', 'net.guid', 'net.latency', 'net.maxconn', 'net.port', 'net.speed', 'nvlink'], gpus: 8, nvlinks: 32 },
  { source: simai.source, node: simai.node, aside: ['gpu', 'net.dev', 'net.gdr', 'net.guid', 'net.latency', 'net.maxconn', 'net.port', 'net.speed', 'nvlink'], gpus: 8, nvlinks: 48 },
  { source: nebius.source, node: nebius.node, aside: ['net.coll', 'net.dev', 'net.gdr', 'net.latency', 'net.maxconn', 'net.port', 'net.speed'], gpus: 0, nvlinks: 0 },
];

for (const { source, node, aside, gpus, nvlinks } of DUMPS) {
  t.test(source, async (t) => {
    const dir = await scratchDirAsync('gdrgate-ncclxml-', TREE_TMP);
    await buildTree(dir, node);
    const host = new FsHost(dir);
    const ours = renderNcclXml(await readNcclTopo(host, await buildInventory(host, { slurmdPidFiles: [] })));
    const real = parseNcclXml(readFileSync(fileURLToPath(new URL(`../fixtures/nccl_topo_xml/${source}`, import.meta.url)), 'utf8'));
    const mine = parseNcclXml(ours);
    if (!real.ok || !mine.ok) throw new Error(`unparsable: ${real.ok ? '' : real.error} ${mine.ok ? '' : mine.error}`);
    const diff = diffNcclXml(mine.value, real.value);
    t.same(diff.filter((d) => expectedBecause(d, new Set()) === null), [], 'every element and attribute from the PCI tree equal (GPU ids and links included: no dump here is from NCCL 2.30+)');
    // What was set aside, so that a change in the lists above shows here.
    t.same([...new Set(diff.map((d) => (d.kind === 'attr' ? `${d.name}.${d.attr}` : d.name)))].sort(), aside);
    const count = (n: string): number => diff.filter((d) => d.name === n && d.kind === 'only-in-b').length;
    t.equal(count('gpu'), gpus, 'gpu elements, one per GPU, from NVML');
    t.equal(count('nvlink'), nvlinks, 'NVSwitch links (four per H100, six per A100), from NVML');
    t.equal(diff.filter((d) => d.kind === 'only-in-a').length, 0, 'nothing of ours missing from the dump');
  });
}

t.test('every corpus topology file parses, and renders back to the same tree', async (t) => {
  for (const f of ['azure_ndv2_topo.xml', 'azure_ndv4_topo.xml', 'azure_ndv5_topo.xml', 'azure_ncv4_topo.xml', ...DUMPS.map((d) => d.source)]) {
    const p = parseNcclXml(readFileSync(fileURLToPath(new URL(`../fixtures/nccl_topo_xml/${f}`, import.meta.url)), 'utf8'));
    if (!p.ok) {
      t.fail(`${f}: ${p.error}`);
      continue;
    }
    t.equal(p.value.name, 'system', `${f}: a system element`);
    const again = parseNcclXml(renderNcclXml(p.value));
    t.same(again.ok ? again.value : again.error, p.value, `${f}: same tree after rendering`);
  }
});

t.test('what the inventory already knows is the text the kernel shows in the file', async (t) => {
  // The SimAI tree is a kernel before pci_speed_string ("16 GT/s"): the style is learned from one file, not assumed.
  for (const [n, style] of [[ibm.node, 'pci_speed_string'], [hgx.node, 'pci_speed_string'], [simai.node, 'legacy'], [nebius.node, 'pci_speed_string']] as const) {
    const dir = await scratchDirAsync('gdrgate-ncclxml-', TREE_TMP);
    await buildTree(dir, n);
    const host = new FsHost(dir);
    const inv = await buildInventory(host, { slurmdPidFiles: [] });
    const { pci } = ncclChain(ncclEndpoints(inv));
    const sample = inv.pci.get(ncclEndpoints(inv)[0]!.sysPath.split('/').pop()!)!;
    const r = await host.readText(`${sample.sysPath}/max_link_speed`);
    t.equal(r.ok && sample.max.speed.state === 'present' ? speedStyleOf(r.value, sample.max.speed.value) : null, style, `${n.hostname ?? 'gpu001'}: ${style}`);
    const known = prefill(inv, [...pci, ...pci.map((p) => p.slice(0, p.lastIndexOf('/')))], style);
    const files = [...known].flatMap(([dir, m]) => [...m].map(([name, text]) => [`${dir}/${name}`, text] as const));
    t.ok(files.length >= pci.length * 6, `${files.length} texts known for ${pci.length} elements`);
    for (const [file, text] of files) {
      const got = await host.readText(file);
      t.equal(got.ok ? got.value : got.reason, text, file);
    }
  }
});

t.test('the speed text styles, and a text in neither', async (t) => {
  t.equal(speedStyleOf('16.0 GT/s PCIe\n', 16), 'pci_speed_string');
  t.equal(speedStyleOf('2.5 GT/s PCIe\n', 2.5), 'pci_speed_string');
  t.equal(speedStyleOf('16 GT/s\n', 16), 'legacy');
  t.equal(speedStyleOf('2.5 GT/s\n', 2.5), 'legacy');
  t.equal(speedStyleOf('8.0 GT/s PCIe\n', 16), null, 'another speed than the inventory holds');
  t.equal(speedStyleOf('Unknown\n', 16), null);
});
