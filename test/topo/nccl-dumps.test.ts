// Element by element: a real NCCL topology dump against gdrgate's file for the PCI tree rebuilt from it (test/gen).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { diffNcclXml, expectedBecause, FROM_ELSEWHERE, parseNcclXml } from '../../src/topo/nccl-diff.js';
import { ncclEndpoints, prefill, readNcclTopo } from '../../src/topo/nccl-read.js';
import { ncclChain } from '../../src/topo/nccl-xml.js';
import * as hgx from '../gen/topologies/sglang30401-hgx-h100.js';
import { renderNcclXml } from '../../src/topo/nccl-xml.js';
import { buildTree, type GenNode } from '../gen/sysfs-tree.js';
import * as ibm from '../gen/topologies/ibm-gx3d-8xh100-vsi.js';

/**
 * What a dump holds that does not come from the PCI tree, so gdrgate leaves it out and NCCL fills it at run time
 * (a file that stated it would override what NCCL finds), as src/topo/nccl-diff.ts lists it, checked here:
 * - cpu host_hash: a hash of the host name and boot id; NCCL 2.27+ rewrites it on load, older ones only tell hosts apart by it.
 * - gpu (dev, sm, rank, gdr, mlopart) and its nvlink/c2c children: NVML, CUDA and the communicator.
 * - net latency, guid, maxconn, gdr (and net/coll/gin/rma flags): the network plugin's properties (IB verbs).
 */
t.test('the attributes set aside as not from the PCI tree', async (t) => {
  t.same(Object.fromEntries(Object.entries(FROM_ELSEWHERE).map(([k, v]) => [k, v.attrs])), {
    cpu: ['host_hash'], gpu: 'all', nvlink: 'all', c2c: 'all', net: ['latency', 'guid', 'maxconn', 'gdr', 'net', 'coll', 'gin', 'rma'],
  });
});

const DUMPS: { source: string; node: GenNode }[] = [ibm];

for (const { source, node } of DUMPS) {
  t.test(source, async (t) => {
    const dir = t.testdir();
    await buildTree(dir, node);
    const host = new FsHost(dir);
    const ours = renderNcclXml(await readNcclTopo(host, await buildInventory(host, { slurmdPidFiles: [] })));
    const real = parseNcclXml(readFileSync(fileURLToPath(new URL(`../fixtures/nccl_topo_xml/${source}`, import.meta.url)), 'utf8'));
    const mine = parseNcclXml(ours);
    if (!real.ok || !mine.ok) throw new Error(`unparsable: ${real.ok ? '' : real.error} ${mine.ok ? '' : mine.error}`);
    const diff = diffNcclXml(mine.value, real.value);
    t.same(diff.filter((d) => expectedBecause(d, new Set()) === null), [], 'every element and attribute from the PCI tree equal (GPU ids and links included: this dump predates NCCL 2.30)');
    // What was set aside, so that a change in the list above shows here.
    const aside = [...new Set(diff.map((d) => (d.kind === 'attr' ? `${d.name}.${d.attr}` : d.name)))].sort();
    t.same(aside, ['cpu.host_hash', 'gpu', 'net.gdr', 'net.guid', 'net.latency', 'net.maxconn', 'nvlink']);
    const count = (n: string): number => diff.filter((d) => d.name === n && d.kind === 'only-in-b').length;
    t.equal(count('gpu'), 8, 'eight gpu elements, one per GPU, from NVML');
    t.equal(count('nvlink'), 32, 'four NVSwitch links per GPU, from NVML');
  });
}

t.test('every corpus topology file parses, and renders back to the same tree', async (t) => {
  for (const f of ['azure_ndv2_topo.xml', 'azure_ndv4_topo.xml', 'azure_ndv5_topo.xml', 'azure_ncv4_topo.xml', ibm.source]) {
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
  for (const n of [ibm.node, hgx.node]) {
    const dir = t.testdir();
    await buildTree(dir, n);
    const host = new FsHost(dir);
    const inv = await buildInventory(host, { slurmdPidFiles: [] });
    const { pci } = ncclChain(ncclEndpoints(inv));
    const known = prefill(inv, [...pci, ...pci.map((p) => p.slice(0, p.lastIndexOf('/')))]);
    t.ok(known.size >= pci.length * 3, `${known.size} texts known for ${pci.length} elements`);
    for (const [file, text] of known) {
      const r = await host.readText(file);
      t.equal(r.ok ? r.value : r.reason, text, file);
    }
  }
});
