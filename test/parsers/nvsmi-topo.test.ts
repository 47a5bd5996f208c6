// Tests the `nvidia-smi topo -m` parser on every real output we hold: corpus copies, the H200 capture, reference-only files.
import t, { type Test } from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { nicNames, normalizeClass, parseNvsmiTopo, topoCell, type NvsmiTopo } from '../../src/parsers/nvsmi-topo.js';
import { shared } from '../helpers/paths.js';

const FIX = fileURLToPath(new URL('../fixtures/nvidia_smi_topo/', import.meta.url));
const H200 = fileURLToPath(new URL('../../examples/h200-vm/capture/cmd/nvidia-smi_topo_m.txt', import.meta.url));
const REF = shared('corpus-reference/nvidia_smi_topo/');
const parse = (name: string): NvsmiTopo => parseNvsmiTopo(readFileSync(FIX + name, 'utf8'));
const row = (p: NvsmiTopo, label: string) => p.rows.find((r) => r.label === label);
/** A row's three trailing columns, for t.same (t.match's `key: null` also passes a missing key). */
const tails = (p: NvsmiTopo, label: string) => {
  const r = row(p, label);
  return r && { cpuAffinity: r.cpuAffinity, numaAffinity: r.numaAffinity, gpuNumaId: r.gpuNumaId };
};
const gpus = (n: number): string[] => Array.from({ length: n }, (_, i) => `GPU${i}`);
const nics = (n: number): string[] => Array.from({ length: n }, (_, i) => `NIC${i}`);

/** Per file: shape, a few cells, affinities, legend. Every corpus file must appear here. */
const CASES: Record<string, (t: Test, p: NvsmiTopo) => void> = {
  'sglang30401_8xH100_8nic.txt': (t, p) => {
    t.same(p.columns, [...gpus(8), ...nics(8)]);
    t.equal(p.format, 'new');
    t.equal(topoCell(p, 'GPU0', 'NIC0'), 'PIX');
    t.equal(topoCell(p, 'GPU0', 'NIC1'), 'NODE');
    t.equal(topoCell(p, 'GPU3', 'NIC4'), 'SYS');
    t.equal(topoCell(p, 'GPU0', 'GPU7'), 'NV18');
    t.equal(topoCell(p, 'NIC7', 'NIC7'), 'X', 'last row ends "X " (trailing space)');
    t.match(row(p, 'GPU4'), { cpuAffinity: /^48-95,144-191$/, numaAffinity: /^1$/, gpuNumaId: /^N\/A$/ });
    t.same(tails(p, 'NIC0'), { cpuAffinity: null, numaAffinity: null, gpuNumaId: null });
    t.equal(p.nicLegend.NIC7, 'mlx5_7');
  },
  'sglang_h100pcie_kvm_1gpu_1nic.txt': (t, p) => {
    t.same(p.columns, ['GPU0', 'NIC0']);
    t.equal(topoCell(p, 'NIC0', 'GPU0'), 'PHB');
    t.match(row(p, 'GPU0'), { cpuAffinity: /^0-251$/, numaAffinity: /^0$/, gpuNumaId: /^N\/A$/ });
    t.same(p.nicLegend, { NIC0: 'mlx5_0' });
  },
  'pytorch_ddp_readme_dgx1v_8xV100_4nic_old_mlx5_columns.txt': (t, p) => {
    t.same(p.columns, [...gpus(8), 'mlx5_2', 'mlx5_0', 'mlx5_3', 'mlx5_1'], 'NIC columns in printed (unsorted) order');
    t.equal(p.format, 'old');
    t.same(p.nicLegend, {});
    t.equal(nicNames(p).mlx5_3, 'mlx5_3');
    t.equal(topoCell(p, 'GPU0', 'mlx5_0'), 'PIX');
    t.equal(topoCell(p, 'GPU0', 'mlx5_1'), 'PHB');
    t.equal(topoCell(p, 'GPU4', 'mlx5_2'), 'PIX');
    t.equal(topoCell(p, 'GPU0', 'GPU5'), 'SYS');
    t.equal(topoCell(p, 'GPU0', 'GPU3'), 'NV2');
    t.equal(topoCell(p, 'mlx5_2', 'mlx5_3'), 'PHB');
    t.same(tails(p, 'GPU7'), { cpuAffinity: '0-19,40-59', numaAffinity: null, gpuNumaId: null });
  },
  'paddle_8xP40_plx_pix_pxb_mlx5_soc_very_old.txt': (t, p) => {
    t.same(p.columns, [...gpus(8), 'mlx5_0']);
    t.equal(p.format, 'old');
    t.equal(topoCell(p, 'GPU0', 'GPU3'), 'PIX');
    t.equal(topoCell(p, 'GPU3', 'GPU4'), 'PXB');
    t.equal(topoCell(p, 'GPU5', 'mlx5_0'), 'SOC', 'kept raw');
    t.equal(normalizeClass(topoCell(p, 'GPU5', 'mlx5_0')!), 'SYS');
    t.equal(p.legend.SOC, 'Connection traversing PCIe as well as the SMP link between CPU sockets(e.g. QPI)');
    t.equal(p.legend.X, 'Self', '"X   = Self" with three spaces');
    t.equal(row(p, 'GPU6')?.cpuAffinity, '0-13');
  },
  'deepep397_4x8H100_topo_mp_12nic_tabs_no_nvlink_legend.txt': (t, p) => {
    t.same(p.columns, [...gpus(8), ...nics(12)]);
    t.equal(topoCell(p, 'GPU0', 'NIC2'), 'PIX');
    t.equal(topoCell(p, 'GPU4', 'NIC8'), 'PIX');
    t.equal(topoCell(p, 'GPU0', 'GPU1'), 'NODE', '-mp: PCIe only');
    t.equal(topoCell(p, 'NIC10', 'NIC11'), 'NODE');
    t.match(row(p, 'GPU5'), { cpuAffinity: /^1,3,5,7,9,11$/, numaAffinity: /^1$/, gpuNumaId: /^N\/A$/ }, 'double tab before GPU NUMA ID');
    t.same(tails(p, 'NIC11'), { cpuAffinity: null, numaAffinity: null, gpuNumaId: null }, 'trailing tab run');
    t.equal(p.nicLegend.NIC10, 'mlx5_10');
    t.notOk('NV#' in p.legend);
  },
  'v100sxm2_4gpu_4nic_pix_pairs_old_no_numa.txt': (t, p) => {
    t.same(p.columns, [...gpus(4), 'mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']);
    t.equal(p.format, 'old');
    t.equal(topoCell(p, 'GPU1', 'mlx5_1'), 'PIX');
    t.equal(topoCell(p, 'GPU1', 'GPU2'), 'NODE');
    t.equal(topoCell(p, 'mlx5_0', 'mlx5_1'), 'PIX');
    t.equal(row(p, 'GPU3')?.cpuAffinity, '14-27');
  },
  'consumer_2x_gtx1080ti_phb_numa_na.txt': (t, p) => {
    t.same(p.columns, gpus(2));
    t.equal(topoCell(p, 'GPU0', 'GPU1'), 'PHB');
    t.same(tails(p, 'GPU1'), { cpuAffinity: '0-11', numaAffinity: 'N/A', gpuNumaId: null });
    t.equal(p.format, 'new');
  },
  'cmp_mining_4gpu_pcie_gen2_phb_node_legend_abridged.txt': (t, p) => {
    t.same(p.columns, gpus(4));
    t.equal(topoCell(p, 'GPU2', 'GPU3'), 'PHB');
    t.equal(topoCell(p, 'GPU1', 'GPU2'), 'NODE');
    t.same(p.legend, { PHB: 'through a PCIe host bridge', NODE: 'through the interconnect between host bridges in one NUMA node' });
  },
};

t.test('every corpus file parses without problems; rows match columns; matrix symmetric', async (t) => {
  const files = readdirSync(FIX).filter((f) => f.endsWith('.txt')).sort();
  t.same(files, Object.keys(CASES).sort(), 'each fixture has its case');
  for (const f of files) {
    t.test(f, async (t) => {
      const p = parse(f);
      t.same(p.problems, []);
      t.same(p.rows.map((r) => r.label), p.columns, 'one row per column, same order');
      for (const r of p.rows) t.equal(Object.keys(r.cells).length, p.columns.length, `${r.label}: full row`);
      CASES[f]!(t, p);
    });
  }
});

t.test('H200 capture: ANSI underline in the header, capture preamble, 1x1', async (t) => {
  const text = readFileSync(H200, 'utf8');
  t.ok(text.includes('\x1b[4mGPU0'), 'fixture really has the escape');
  const p = parseNvsmiTopo(text);
  t.same(p.problems, []);
  t.same(p.columns, ['GPU0']);
  t.same(p.rows, [{ label: 'GPU0', cells: { GPU0: 'X' }, cpuAffinity: '0-15', numaAffinity: '0', gpuNumaId: 'N/A' }]);
  t.equal(p.format, 'new');
  t.equal(p.legend.PIX, 'Connection traversing at most a single PCIe bridge');
});

t.test('reference-only outputs, read in place', { skip: existsSync(REF) ? false : `corpus-reference absent (${REF})` }, async (t) => {
  const dell = parseNvsmiTopo(readFileSync(REF + 'dell_r760xa_a40_pod_topo_mp_10nic_sriov_vfs_node.txt', 'utf8'));
  t.same(dell.problems, []);
  t.same(dell.columns, ['GPU0', ...nics(10)], 'header starting TAB + 4 spaces');
  t.equal(topoCell(dell, 'GPU0', 'NIC9'), 'NODE');
  t.equal(topoCell(dell, 'NIC1', 'NIC2'), 'PIX');
  const puget = parseNvsmiTopo(readFileSync(REF + 'puget_wrx90_2xrtx6000ada_2nic_phb.txt', 'utf8'));
  t.same(puget.problems, []);
  t.equal(topoCell(puget, 'GPU0', 'NIC1'), 'NODE');
  t.match(puget.rows[0], { cpuAffinity: /^0-23$/, numaAffinity: /^0$/, gpuNumaId: /^N\/A$/ });
});

t.test('space-aligned header: a 7-character NIC name leaves one space before "CPU Affinity"', async (t) => {
  const p = parseNvsmiTopo('        GPU0    mlx5_10 CPU Affinity\nGPU0     X      PIX     0-7\nmlx5_10 PIX      X\n');
  t.same(p.problems, []);
  t.same(p.columns, ['GPU0', 'mlx5_10']);
  t.equal(topoCell(p, 'mlx5_10', 'GPU0'), 'PIX');
  t.equal(p.rows[0]?.cpuAffinity, '0-7');
});

t.test('junk and damage: problems, never a throw', async (t) => {
  const noHeader = ['no matrix header (a line of GPU0 … column names) found'];
  t.same(parseNvsmiTopo('').problems, noHeader);
  t.same(parseNvsmiTopo('NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver.\n').problems, noHeader);
  t.same(parseNvsmiTopo('\x00\xff\u202e garbage \t\t\n').problems, noHeader);
  const ragged = parseNvsmiTopo('\tGPU0\tGPU1\tNIC0\tCPU Affinity\nGPU0\t X \tPIX\nGPU1\tPXB\t X \tFOO\t0-3\nNIC9\tPIX\n');
  t.same(ragged.problems, [
    'row GPU0 has 2 values, expected at least 3',
    'row GPU1 column NIC0: unknown token "FOO"',
    'row "NIC9" is not one of the columns',
    'column NIC0 has no row',
    'GPU0/GPU1 is PIX but GPU1/GPU0 is PXB',
    'column NIC0 has no NIC Legend entry',
  ]);
  t.equal(topoCell(ragged, 'GPU1', 'NIC0'), 'FOO', 'raw token kept');
  const diag = parseNvsmiTopo('\tGPU0\tGPU1\nGPU0\tPIX\tPIX\nGPU1\tPIX\t X \n\nNIC Legend:\n\n  NIC3: mlx5_3\n');
  t.same(diag.problems, ['row GPU0: diagonal is PIX, not X', 'NIC Legend names NIC3, which is not a column']);
});

t.test('normalizeClass', async (t) => {
  t.equal(normalizeClass('SOC'), 'SYS');
  t.equal(normalizeClass(' PIX '), 'PIX');
  t.equal(normalizeClass('NV12'), 'NV12');
  t.equal(normalizeClass('N/A'), 'N/A');
});
