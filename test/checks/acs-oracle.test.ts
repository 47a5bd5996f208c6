// pcie-acs against NVIDIA's rdma_topo (shared/oracles/rdma_topo beside the repo): on every generated tree and on one-fault
// variants of the newest ones, each port's verdict and required mask equal `rdma_topo check`'s. Without the oracle only
// that comparison skips: every generated tree is still healthy, and each fault still fails at its port.
import t, { type Test } from 'tap';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { Finding } from '../../src/model/finding.js';
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { hgxB300 } from '../gen/topologies/hgx-b300-cx8-inline.js';
import { REPO } from '../helpers/paths.js';
import { closeOracle, dmaVerdicts, judge, noOracle, type Oracle, sides } from './_acs-oracle.js';

/** The agreement the issue asks for, as one list each so a difference shows as a diff (_acs-oracle.ts sides). */
function agree(t: Test, o: Oracle, fs: Finding[]): void {
  const s = sides(o, fs);
  if (s.what === 'no-topology') t.strictSame(s.ours, [], `rdma_topo: ${o.error}; gdrgate judges no port by a Direct NIC mask`);
  else if (s.what === 'oracle-error') t.strictSame(s.ours, [], `rdma_topo: ${o.error}; gdrgate cannot tell either (skips only)`);
  else t.strictSame(s.ours, s.theirs, 'every port: same verdict, same required mask');
}

const TOPO = path.join(REPO, 'test/gen/topologies');
const trees: [string, GenNode][] = [];
for (const f of readdirSync(TOPO).filter((x) => x.endsWith('.ts')).sort()) {
  const mod = (await import(`../gen/topologies/${f.replace(/\.ts$/, '.js')}`)) as { node?: GenNode; sriovNode?: (vfsPerPf: number) => GenNode };
  // The SR-IOV tree is made at any size (the deadline test's has 2,088 functions): here with 2 VFs per PF.
  const n = mod.node ?? mod.sriovNode?.(2);
  if (!n) throw new Error(`test/gen/topologies/${f} exports neither node nor sriovNode`);
  trees.push([f.replace(/\.ts$/, ''), n]);
}
const named = (name: string): GenNode => structuredClone(trees.find(([n]) => n === name)![1]);
const edit = (name: string, fn: (n: GenNode, d: (bdf: string) => NonNullable<ReturnType<typeof allDevices>[number]>) => void): GenNode => {
  const n = named(name);
  fn(n, (bdf) => allDevices(n).find((x) => x.bdf === bdf)!);
  return n;
};

/** One fault each, on the newest trees: [name, tree, the ports that must fail]. */
const faults: [string, GenNode, string[]][] = [
  ['GB300 Data Direct: the GPU-side switch port lost ReqRedir', edit('gb300-cx8-dma-direct', (_, d) => void (d('0009:02:01.0').acsCtl = 0x0011)), ['0009:02:01.0']],
  ['GB300 Data Direct: the DMA-side switch port has ReqRedir (forbidden there)', edit('gb300-cx8-dma-direct', (_, d) => void (d('0008:02:00.0').acsCtl = 0x001d)), ['0008:02:00.0']],
  ['GB300 Data Direct: SrcValid on the GPU segment\'s Grace root port', edit('gb300-cx8-dma-direct', (_, d) => void (d('0018:00:00.0').acsCtl = 0x001d)), ['0018:00:00.0']],
  ['GB300 Data Direct: the NIC\'s Grace root port with ACS off (last generation\'s bare-metal advice)', edit('gb300-cx8-dma-direct', (_, d) => void (d('0000:00:00.0').acsCtl = 0)), ['0000:00:00.0']],
  ['GB300 Data Direct: the DMA function in an IOMMU group of its own', edit('gb300-cx8-dma-direct', (_, d) => void (d('0019:03:00.0').iommuGroup = 140)), ['0019:03:00.0']],
  ['GB300 tray on Grace root ports: two GPUs of NUMA node 1 in one IOMMU group', edit('gb300-tray-numa', (_, d) => void (d('0019:01:00.0').iommuGroup = 22)), ['0018:01:00.0', '0019:01:00.0']],
  ['HGX B300 inline, bare metal: a NIC in an IOMMU group apart from its GPU', edit('hgx-b300-cx8-inline', (_, d) => void (d('0000:39:00.0').iommuGroup = 90)), ['0000:39:00.0']],
  ['GB300 tray on Grace root ports: a GPU root port with ACS off', edit('gb300-tray-numa', (_, d) => void (d('0009:00:00.0').acsCtl = 0)), ['0009:00:00.0']],
  ['GH200: CmpltRedir off on the NIC root port', edit('gh200-cx7', (_, d) => void (d('0000:00:00.0').acsCtl = 0x0015)), ['0000:00:00.0']],
  ['HGX B300 inline, bare metal: ReqRedir on a NIC switch port', edit('hgx-b300-cx8-inline', (_, d) => void (d('0000:16:00.0').acsCtl = 0x0004)), ['0000:16:00.0']],
  ['HGX B300 inline with ATS on the CX8 (virtualized) but bare-metal ACS and one IOMMU group per NIC and GPU', hgxB300(true), [0x17, 0x39, 0x5f, 0x70, 0x97, 0xb9, 0xdc, 0xed].flatMap((n) => [`0000:${(n - 3).toString(16)}:01.0`, `0000:${(n - 1).toString(16)}:00.0`, `0000:${(n - 1).toString(16)}:01.0`, `0000:${(n + 2).toString(16)}:00.0`, `0000:${n.toString(16)}:00.0`]).sort()],
  ['GB300 Data Direct read without root (256-byte configs): neither can tell', edit('gb300-cx8-dma-direct', (n) => allDevices(n).forEach((d) => (d.configBytes = 256))), []],
];

t.teardown(closeOracle);

for (const [name, n] of trees) {
  t.test(`${name}: healthy, and gdrgate and rdma_topo agree port by port`, async (t) => {
    const r = await judge(n);
    t.strictSame(r.findings.filter((f) => f.status === 'fail').map((f) => f.subject), [], 'the generated tree is healthy');
    if (!r.oracle) return void t.pass('the comparison with rdma_topo', { skip: noOracle });
    agree(t, r.oracle, r.findings);
    t.strictSame(dmaVerdicts(r.iommu), r.oracle.groups, 'same IOMMU group verdicts (DMA functions, inline NICs, NUMA nodes)');
  });
}

for (const [name, n, failing] of faults) {
  t.test(`${name}: the fault fails at its port, and gdrgate and rdma_topo agree`, async (t) => {
    const r = await judge(n);
    t.strictSame([...r.findings, ...r.iommu].filter((f) => f.status === 'fail').map((f) => f.subject).sort(), failing, 'failing ports (and DMA functions)');
    if (!r.oracle) return void t.pass('the comparison with rdma_topo', { skip: noOracle });
    agree(t, r.oracle, r.findings);
    if (!r.oracle.error) t.strictSame(dmaVerdicts(r.iommu), r.oracle.groups, 'same IOMMU group verdicts (DMA functions, inline NICs, NUMA nodes)');
  });
}
