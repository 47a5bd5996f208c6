// pcie-acs against NVIDIA's rdma_topo (shared/oracles/rdma_topo beside the repo): on every generated tree and on one-fault
// variants of the newest ones, each port's verdict and required mask equal `rdma_topo check`'s. Without the oracle only
// that comparison skips: every generated tree is still healthy, and each fault still fails at its port.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { Finding } from '../../src/model/finding.js';
import { allDevices, buildTree, type GenNode } from '../gen/sysfs-tree.js';
import { hgxB300 } from '../gen/topologies/hgx-b300-cx8-inline.js';
import { REPO, shared } from '../helpers/paths.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';
import { runCheck } from './_trees.js';

const ORACLE = shared('oracles/rdma_topo/rdma_topo');
const python = spawnSync('python3', ['--version'], { encoding: 'utf8', timeout: 20_000 }).status === 0;
/** Why the comparison with rdma_topo skips, or false when it runs. */
const noOracle = existsSync(ORACLE) ? (python ? false : 'rdma_topo oracle not available (no python3)') : `rdma_topo oracle not available (${ORACLE} absent)`;

/** What rdma_topo says of each port, or why it said nothing. */
interface Oracle { ports: Map<string, { ok: boolean | null; mask: string | null }>; groups: string[]; error: string | null }

function oracle(root: string): Oracle {
  const r = spawnSync('python3', [ORACLE, 'check'], { env: { PATH: process.env.PATH ?? '', RDMA_TOPO_DEVDIR: `${root}/sys/bus/pci/devices/` }, encoding: 'utf8', timeout: 60_000 });
  const ports = new Map<string, { ok: boolean | null; mask: string | null }>();
  for (const m of r.stdout.matchAll(/^(OK|FAIL)\tACS for \S+ (\S+) has (?:in)?correct values [01]+ !?= ([01x]{7})/gm)) ports.set(m[2]!, { ok: m[1] === 'OK', mask: m[3]! });
  for (const m of r.stdout.matchAll(/^FAIL\tCould not read ACS control register for \S+ (\S+)$/gm)) ports.set(m[1]!, { ok: null, mask: null });
  // IOMMU group verdicts: of a DMA function or an inline NIC (by its address), of a NUMA node's GPUs and NICs (by node).
  const v = (m: RegExpMatchArray, who: string): string => `${who} ${m[1] === 'OK' ? 'pass' : 'fail'}`;
  const groups = [
    ...[...r.stdout.matchAll(/^(OK|FAIL)\tKernel iommu_group for (?:DMA|cx_nic) (\S+) and (?:GPU|nvgpu)/gm)].map((m) => v(m, m[2]!)),
    ...[...r.stdout.matchAll(/^(OK|FAIL)\t(?:All kernel iommu_groups|Multiple devices share|Kernel iommu_group missing).* NUMA node (\d+)/gm)].map((m) => v(m, `numa${m[2]}`)),
  ].sort();
  const err = /^E: (.*)$/m.exec(r.stdout)?.[1] ?? (r.status !== 0 && r.status !== 100 ? `exit ${r.status}: ${r.stderr.trim().split('\n').at(-1)}` : null);
  return { ports, groups, error: err };
}

/** gdrgate's pcie-acs and iommu-mode findings on the tree, and rdma_topo's answer (null without the oracle). */
async function judge(n: GenNode): Promise<{ oracle: Oracle | null; findings: Finding[]; iommu: Finding[] }> {
  const dir = await scratchDirAsync('gdrgate-oracle-', TREE_TMP);
  try {
    await buildTree(dir, n);
    const inv = await buildInventory(new FsHost(dir));
    return { oracle: noOracle ? null : oracle(dir), findings: runCheck('pcie-acs', inv, null), iommu: runCheck('iommu-mode', inv, null) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** iommu-mode's group verdicts, as rdma_topo gives them: per DMA function or inline NIC, per NUMA node (any fail fails it). */
function dmaVerdicts(fs: Finding[]): string[] {
  const group = fs.filter((f) => f.code.startsWith('iommu-group') || (f.code === 'iommu-ok' && /^(group of|a group)/.test(f.expected ?? '')));
  const byNode = new Map<string, string>();
  const out: string[] = [];
  for (const f of group) {
    const n = /on NUMA node (\d+)/.exec(f.message)?.[1];
    if (n === undefined) out.push(`${f.subject} ${f.status}`);
    else if (byNode.get(n) !== 'fail') byNode.set(n, f.status);
  }
  return [...out, ...[...byNode].map(([n, st]) => `numa${n} ${st}`)].sort();
}
const MASKED = new Set(['acs-mask', 'acs-mask-ok']);
const verdict = (f: Finding): string => `${f.subject} ${f.status} ${f.expected ?? ''}`;

/** The agreement the issue asks for, as one list each so a difference shows as a diff. */
function agree(t: Test, o: Oracle, fs: Finding[]): void {
  const ours = fs.filter((f) => MASKED.has(f.code) || (o.ports.size > 0 && f.code === 'acs-unreadable'));
  if (o.error?.startsWith('No supported topology')) {
    t.strictSame(ours.map(verdict), [], `rdma_topo: ${o.error}; gdrgate judges no port by a Direct NIC mask`);
    return;
  }
  if (o.error) {
    t.strictSame(fs.filter((f) => f.status !== 'skip').map(verdict), [], `rdma_topo: ${o.error}; gdrgate cannot tell either (skips only)`);
    return;
  }
  const theirs = [...o.ports].sort(([a], [b]) => (a < b ? -1 : 1)).map(([bdf, p]) => (p.ok === null ? `${bdf} skip ` : `${bdf} ${p.ok ? 'pass' : 'fail'} ${p.mask}`));
  t.strictSame(ours.map(verdict).sort(), theirs, 'every port: same verdict, same required mask');
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
