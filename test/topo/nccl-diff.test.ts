// The NCCL topology XML reader and comparer (src/topo/nccl-diff.ts) on what the dump tests do not meet: malformed
// files refused with where, comments and declarations skipped, an element that moved, and the differences excused.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { diffNcclXml, expectedBecause, flatten, gpuBusIds, parseNcclXml, pciLessNets, renderDiff, type Difference } from '../../src/topo/nccl-diff.js';
import type { XmlNode } from '../../src/topo/nccl-xml.js';
import { fixture } from '../helpers/paths.js';

const parsed = (text: string): XmlNode | string => {
  const p = parseNcclXml(text);
  return p.ok ? p.value : p.error;
};
const tree = (text: string): XmlNode => {
  const p = parseNcclXml(text);
  if (!p.ok) throw new Error(p.error);
  return p.value;
};

t.test('malformed files are refused, each with where', async (t) => {
  t.same(
    ['<system>x</system>', '<system><cpu></system>', '<system>', '<system/><system/>', '', '<!-- open', '<system version=1/>', '</system>'].map(parsed),
    [
      'text outside any tag at offset 8: "x"',
      '</system> at offset 13 closes cpu',
      '<system> is never closed',
      'expected one root element, found 2',
      'expected one root element, found 0',
      'unterminated comment or declaration at offset 0',
      'malformed tag at offset 0: "<system version=1/>"',
      '</system> at offset 0 closes nothing',
    ],
  );
});

t.test('a declaration and comments are skipped; quotes of either kind; values verbatim, as NCCL reads them', async (t) => {
  t.same(parsed('<?xml version="1.0"?>\n<!-- NCCL topology -->\n<system version="1"><!-- a GPU --><pci busid=\'0000:01:00.0\' class="0x030200"/></system>\n'), {
    name: 'system', attrs: [['version', '1']], subs: [{ name: 'pci', attrs: [['busid', '0000:01:00.0'], ['class', '0x030200']], subs: [] }],
  });
  // NCCL's xmlGetValue copies a value byte by byte up to its closing quote and decodes no entity.
  t.same(parsed('<system><net name="a&amp;b"/></system>'), { name: 'system', attrs: [], subs: [{ name: 'net', attrs: [['name', 'a&amp;b']], subs: [] }] });
});

t.test('an element that moved: its new parent named, the CPUs each only in one', async (t) => {
  const a = tree('<system><cpu numaid="0"><pci busid="0000:01:00.0"/></cpu></system>');
  const b = tree('<system><cpu numaid="1"><pci busid="0000:01:00.0"/></cpu></system>');
  const d = diffNcclXml(a, b);
  t.same(d, [
    { kind: 'only-in-a', element: '/system/cpu[0]', name: 'cpu' },
    { kind: 'parent', element: 'pci[0000:01:00.0]', name: 'pci', a: '/system/cpu[0]', b: '/system/cpu[1]' },
    { kind: 'only-in-b', element: '/system/cpu[1]', name: 'cpu' },
  ]);
  t.equal(renderDiff(d, { a: 'ours', b: 'nccl' }), '/system/cpu[0]: only in ours\npci[0000:01:00.0]: under /system/cpu[0] in ours, under /system/cpu[1] in nccl\n/system/cpu[1]: only in nccl');
  t.same(diffNcclXml(a, a), []);
  t.equal(renderDiff([], { a: 'ours', b: 'nccl' }), 'same elements, same attributes');
});

t.test('elements named alike are told apart by their order', async (t) => {
  t.same([...flatten(tree('<system><cpu numaid="0"><nic/><nic/></cpu></system>')).keys()], ['/system', '/system/cpu[0]', '/system/cpu[0]/nic', '/system/cpu[0]/nic#2']);
});

t.test('what is excused: a value the file leaves to NCCL, never one it states differently; GPU links only for GPUs', async (t) => {
  const net = (a: string | null): Difference => ({ kind: 'attr', element: 'net[mlx5_0]', name: 'net', attr: 'speed', a, b: '400000' });
  t.equal(expectedBecause(net(null), new Set()), "the network plugin's properties (IB verbs): dev its index, speed the port's, port its IB port plus the function's place among those merged into one device; gdr is whether GPUDirect RDMA works at run time");
  t.equal(expectedBecause(net('100000'), new Set()), null, 'a speed the file states and NCCL differs on: a real difference');
  const link = (bus: string): Difference => ({ kind: 'attr', element: `pci[${bus}]`, name: 'pci', attr: 'link_width', a: '16', b: '8' });
  const gpus = new Set(['0000:1a:00.0']);
  t.same([expectedBecause(link('0000:1a:00.0'), gpus), expectedBecause(link('0000:1b:00.0'), gpus)], ['a GPU attribute NCCL 2.30+ reads from NVML', null]);
});

t.test('the GPUs and the PCI-less nets of real dumps', async (t) => {
  const live = tree(readFileSync(fixture('device-h200-live/nccl-2026-12-03', 'nccl-dump.xml'), 'utf8'));
  t.same([...pciLessNets(live)], ['/system/cpu[-1]/nic', 'net[eth0]'], 'the socket interface NCCL fell back to, under the cpu');
  t.same([...gpuBusIds(live)], ['0000:00:06.0']);
  const ibm = tree(readFileSync(fixture('nccl_topo_xml', 'ibm_cloud_gx3d_8xH100_vsi_topo_roce_cx7_vf.xml'), 'utf8'));
  t.same([...pciLessNets(ibm)], [], 'every adapter of the IBM dump under its pci element');
  t.same([...gpuBusIds(ibm)], ['0000:a4:00.0', '0000:ae:00.0', '0000:b8:00.0', '0000:c2:00.0', '0000:cc:00.0', '0000:d6:00.0', '0000:e0:00.0', '0000:ea:00.0'], 'the eight H100s, no adapter or bridge');
});
