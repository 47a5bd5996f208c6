// Probe planning: the nearest GPU of each HCA on real topologies, and the exact argument vectors and recipes.
import t from 'tap';
import { PROBE_DEFAULTS, probesConfig, type ProbesConfig } from '../../src/probes/config.js';
import { nearestGpus, planProbes } from '../../src/probes/plan.js';
import type { IbWriteSpec, NvbwSpec } from '../../src/probes/types.js';
import { topoMatrix } from '../../src/topo/matrix.js';
import { node as DGX1 } from '../gen/topologies/dgx1v-8xv100-4nic.js';
import { node as HGX } from '../gen/topologies/sglang30401-hgx-h100.js';
import { node as P40 } from '../gen/topologies/paddle-8xp40-plx-cascade.js';
import { node as V100 } from '../gen/topologies/v100sxm2-4gpu-4nic-pairs.js';
import { twoRail } from '../epilog/_env.js';
import { inventoryOf } from './_inv.js';

const RANK: Record<string, number> = { PIX: 0, PXB: 1, PHB: 2, NODE: 3, SYS: 4 };
const cfg = (over: Parameters<typeof probesConfig>[0] = {}): ProbesConfig => probesConfig(over)!;

t.test('each HCA gets its nearest GPU (lowest class, then lowest bus) on four real topologies', async (t) => {
  for (const [name, node] of Object.entries({ DGX1, HGX, P40, V100 })) {
    const inv = await inventoryOf(node);
    const m = topoMatrix(inv);
    const near = nearestGpus(inv);
    for (const n of m.nics) {
      const best = Math.min(...m.gpus.map((g) => RANK[m.cell(g.label, n.label)] ?? 9));
      const first = m.gpus.findIndex((g) => (RANK[m.cell(g.label, n.label)] ?? 9) === best);
      t.strictSame(near.get(n.name), { bdf: m.gpus[first]!.bdf, index: first }, `${name} ${n.name}: GPU${first} (${m.cell(m.gpus[first]!.label, n.label)})`);
    }
  }
  const v = nearestGpus(await inventoryOf(V100));
  t.strictSame([...v].map(([n, g]) => `${n}:GPU${g.index}`), ['mlx5_0:GPU0', 'mlx5_1:GPU0', 'mlx5_2:GPU2', 'mlx5_3:GPU2'], 'V100: each NIC pair PIX with its GPU pair');
});

t.test('default recipe: host then GPU memory per HCA, exact argv, loopback client', async (t) => {
  const inv = await inventoryOf(twoRail());
  const units = planProbes(inv, cfg());
  t.equal(units.length, 2, 'one unit per HCA, no nvbandwidth without its path');
  const who = (s: IbWriteSpec) => [s.probe, s.nic, s.gpu, s.gpuIndex];
  t.same((units as IbWriteSpec[][]).map((u) => u.map(who)), [
    [['ib-write-host', 'mlx5_0', null, null], ['ib-write-gpu', 'mlx5_0', '0000:41:00.0', 0]],
    [['ib-write-host', 'mlx5_1', null, null], ['ib-write-gpu', 'mlx5_1', '0000:82:00.0', 1]],
  ], 'host then GPU memory, per HCA: two probes each, the GPU nearest the HCA');
  const [host, gpu] = units[0] as IbWriteSpec[];
  t.strictSame(host!.serverArgs, ['-d', 'mlx5_0', '-s', '65536', '-n', '5000', '-q', '1', '-F', '--report_gbits', '-p', '18515']);
  t.strictSame(host!.args, [...host!.serverArgs, '127.0.0.1']);
  t.match(host, { probe: /^ib-write-host$/, tool: /^\/usr\/bin\/ib_write_bw$/, nic: /^mlx5_0$/, timeoutMs: 8000 });
  t.equal(host!.gpu, null, 'host memory: no GPU');
  t.equal(host!.numactl, null, 'no numactl configured');
  t.strictSame(host!.recipe, { tool: 'ib_write_bw', args: host!.args, msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: null, direction: 'host->nic->host' });
  t.match(gpu, { probe: /^ib-write-gpu$/, gpu: /^0000:41:00\.0$/, gpuIndex: 0 });
  t.strictSame(gpu!.args.slice(-2), ['--use_cuda=0', '127.0.0.1']);
});

t.test('numactl binding by the HCA NUMA node, DMA-BUF, duration, QPs, extra flags, HCA filter', async (t) => {
  const inv = await inventoryOf(twoRail());
  const c = cfg({ tools: { ibWriteBw: '/opt/perftest/ib_write_bw', numactl: '/usr/bin/numactl' }, ibWriteBw: { dmabuf: true, durationS: 5, qps: 4, extraArgs: ['-x', '3'], hcas: ['mlx5_1'] } });
  const units = planProbes(inv, c);
  t.equal(units.length, 1, 'only mlx5_1');
  t.same(units[0]!.map((s) => s.probe), ['ib-write-host', 'ib-write-gpu']);
  const [host, gpu] = units[0] as IbWriteSpec[];
  t.strictSame(host!.numactl, { path: '/usr/bin/numactl', node: 1 });
  t.equal(host!.recipe.numaNode, 1);
  t.strictSame(gpu!.args, ['-d', 'mlx5_1', '-s', '65536', '-D', '5', '-q', '4', '-F', '--report_gbits', '-p', '18515', '--use_cuda=1', '--use_cuda_dmabuf', '-x', '3', '127.0.0.1']);
  t.match(gpu!.recipe, { durationS: 5, qps: 4 });
  t.equal(gpu!.recipe.iterations, null, 'a duration, not an iteration count');
  t.not(host!.recipe, gpu!.recipe);
});

t.test('nvbandwidth: one run per testcase, -b and -j in the recipe; none without GPUs or a path', async (t) => {
  const inv = await inventoryOf(twoRail());
  const units = planProbes(inv, cfg({ tools: { ibWriteBw: null, nvbandwidth: '/opt/nvbandwidth' }, nvbandwidth: { json: true, bufferMiB: 64 } }));
  t.equal(units.length, 1);
  t.same(units[0]!.map((s) => s.probe), ['nvbw-h2d', 'nvbw-d2h'], 'one run per testcase');
  const [h2d, d2h] = units[0] as NvbwSpec[];
  t.strictSame(h2d!.args, ['-t', 'host_to_device_memcpy_ce', '-b', '64', '-j']);
  t.match(h2d!.recipe, { tool: /^nvbandwidth$/, msgSize: 64 * 2 ** 20, direction: /^h2d$/ });
  t.equal(h2d!.recipe.qps, null, 'no QPs for nvbandwidth');
  t.match(d2h, { probe: /^nvbw-d2h$/, testcase: /^device_to_host_memcpy_ce$/ });
  t.same(d2h!.gpus, ['0000:41:00.0', '0000:82:00.0'], 'both GPUs, in one run');
  t.strictSame(planProbes(inv, { ...PROBE_DEFAULTS, tools: { ibWriteBw: null, nvbandwidth: null, numactl: null } }), []);
});

t.test('config: defaults, and an explicit sampling section replaces the default whole', async (t) => {
  t.equal(probesConfig(undefined), null, 'no section: no probes');
  t.strictSame(cfg().sampling, { everyNthJob: null, minIntervalS: 3600, combine: 'any' });
  t.strictSame(cfg({ sampling: { everyNthJob: 10 } }).sampling, { everyNthJob: 10, minIntervalS: null, combine: 'any' });
  t.equal(cfg({ budgetMs: 5000 }).budgetMs, 5000);
});
