// A small fleet's epilog textfiles, written by the real renderer (src/epilog/prom.ts) from samples whose values are
// the real ib_write_bw runs in test/fixtures/ib_write_bw parsed by the real parser: each node has a host rail and
// two GPU rails at the T4 run's 23 Gb/s, sampled a minute apart up to the generator's GEN_TIME; the slow node's second GPU rail runs at the slow run's 10.5 Gb/s. Not a
// test file: the Prometheus loader's tests and its end-to-end test share it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderProm } from '../../src/epilog/prom.js';
import { parseIbWriteBw } from '../../src/parsers/ib-write-bw.js';
import { makeSample, type ProbeRecipe } from '../../src/samples/sample.js';
import { StatsAccumulator, type KeyStats } from '../../src/samples/stats.js';
import { GEN_TIME } from '../gen/fleet.js';
import { REPO } from '../helpers/paths.js';
import { seeded } from '../helpers/seeded.js';

const avg = (file: string): number => {
  const r = parseIbWriteBw(readFileSync(path.join(REPO, 'test/fixtures/ib_write_bw', file), 'utf8'));
  const row = r.rows[r.rows.length - 1];
  if (!row) throw new Error(`${file}: no result row`);
  return row.bwAverage;
};
export const HOST_GBPS = avg('sriov_roce_host_client_92gbps.txt');
export const GPU_GBPS = avg('openshift_t4_cuda_client_sweep_23gbps.txt');
export const SLOW_GBPS = avg('sriov_roce_t4_cuda_client_10gbps_slow.txt');

const recipe = (direction: string, args: string[]): ProbeRecipe => ({ tool: 'ib_write_bw', args, msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: 0, direction });
export const RAILS = [
  { probe: 'ib-write-host', gpu: null, nic: 'mlx5_0', recipe: recipe('host->nic->host', ['-d', 'mlx5_0']), base: HOST_GBPS },
  { probe: 'ib-write-gpu', gpu: '0000:41:00.0', nic: 'mlx5_0', recipe: recipe('gpu->nic->gpu', ['-d', 'mlx5_0', '--use_cuda=0']), base: GPU_GBPS },
  { probe: 'ib-write-gpu', gpu: '0000:82:00.0', nic: 'mlx5_1', recipe: recipe('gpu->nic->gpu', ['-d', 'mlx5_1', '--use_cuda=1']), base: GPU_GBPS },
] as const;

export interface NodeFile {
  readonly node: string;
  readonly text: string;
  readonly stats: readonly KeyStats[];
}

/** `samples` per rail, each within ±1% of its rail's figure (seeded per node); the slow node's last rail at SLOW_GBPS. */
export function nodeTextfile(node: string, slow: boolean, seed: number, samples = 7): NodeFile {
  const rnd = seeded(seed);
  const acc = new StatsAccumulator();
  RAILS.forEach((r, i) => {
    const base = slow && i === RAILS.length - 1 ? SLOW_GBPS : r.base;
    for (let k = 0; k < samples; k++) {
      const value = Math.round(base * (0.99 + rnd.int(2001) / 100_000) * 100) / 100;
      acc.add(makeSample({ ts: GEN_TIME - (samples - 1 - k) * 60_000, node, job: String(1000 + k), probe: r.probe, recipe: r.recipe, gpu: r.gpu, nic: r.nic, bytes: 65536, value, unit: 'Gb/s' }));
    }
  });
  const stats = acc.result({ lastN: 5 });
  return { node, stats, text: renderProm({ node, stats, window: 5, spool: { torn: 0, corrupt: 0 }, now: GEN_TIME + 600_000 }) };
}
