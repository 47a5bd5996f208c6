// The Epilog's probe runs counted per probe, subject and outcome (src/epilog/probe-runs.ts): what recordProbeRuns
// appends is counted back exactly, this node's only (a spool copied from a golden image holds another's); a torn line (a
// crash mid-append), a line of unknown outcome, or one whose fields are not a probe's are skipped, never counted.
import t from 'tap';
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { countProbeRuns, PROBE_RUNS_FILE, recordProbeRuns } from '../../src/epilog/probe-runs.js';
import type { ProbeOutcome, ProbeSpec } from '../../src/probes/types.js';
import { scratchDir } from '../helpers/scratch.js';

const dir = path.join(scratchDir('gdrgate-probe-runs-'), 'spool');
mkdirSync(dir, { mode: 0o755 });
const recipe = { tool: 'ib_write_bw', args: [], msgSize: null, iterations: null, durationS: null, qps: null, numaNode: null, direction: 'gpu->nic->gpu' };
const ib = (gpu: string | null): ProbeSpec => ({ kind: 'ib_write_bw', probe: gpu ? 'ib-write-gpu' : 'ib-write-host', tool: '/usr/bin/ib_write_bw', nic: 'mlx5_0', gpu, gpuIndex: gpu ? 0 : null, gpus: gpu ? [gpu] : [], numactl: null, serverArgs: [], args: [], recipe, timeoutMs: 1000 });
const nv: ProbeSpec = { kind: 'nvbandwidth', probe: 'nvbw-d2h', tool: '/usr/bin/nvbandwidth', testcase: 'device_to_host_memcpy_ce', args: [], recipe: { ...recipe, tool: 'nvbandwidth', direction: 'd2h' }, gpus: [], timeoutMs: 1000 };

t.test('recorded runs counted back, by outcome, the newest time of each', async (t) => {
  const run = (gpuOk: boolean): ProbeOutcome[] => [
    { spec: ib(null), kind: 'ok', samples: [], durationMs: 5, notes: [] },
    gpuOk ? { spec: ib('0000:41:00.0'), kind: 'ok', samples: [], durationMs: 5, notes: [] } : { spec: ib('0000:41:00.0'), kind: 'failed', why: 'GPU buffer failed (exit 1)', lines: [], durationMs: 5 },
    { spec: nv, kind: 'unusable', why: '/usr/bin/nvbandwidth: missing' },
  ];
  recordProbeRuns(dir, 'gpu001', '1', run(true), 1000);
  recordProbeRuns(dir, 'gpu001', '2', run(false), 2000);
  recordProbeRuns(dir, 'golden', '9', run(false), 2500);
  recordProbeRuns(dir, 'gpu001', '3', [{ spec: ib('0000:41:00.0'), kind: 'budget', why: 'no time left' }], 3000);
  appendFileSync(path.join(dir, PROBE_RUNS_FILE), [
    JSON.stringify({ ts: 4000, node: 'gpu001', job: '4', probe: 'ib-write-host', subject: 'mlx5_0', outcome: 'exploded' }),
    JSON.stringify({ ts: 4000, node: 'gpu001', job: '4', probe: 'ib-write-host', subject: 'mlx5_0"} 1e9\nx{a="', outcome: 'ok' }),
    JSON.stringify({ ts: 'soon', node: 'gpu001', job: '4', probe: 'ib-write-host', subject: 'mlx5_0', outcome: 'ok' }),
    JSON.stringify({ ts: 4000, job: '4', probe: 'ib-write-host', subject: 'mlx5_0', outcome: 'ok' }),
    JSON.stringify({ ts: 4000, node: 'gpu001', job: '4', probe: 'ib-write-host', subject: 'rxe@eth0', outcome: 'ok' }),
    '{"ts":5000,"job":"5","probe":"ib-wri',
  ].join('\n'));
  t.strictSame(countProbeRuns(dir, 'gpu001'), [
    { probe: 'ib-write-gpu', subject: 'mlx5_0/0000:41:00.0', outcome: 'ok', runs: 1, lastTs: 1000 },
    { probe: 'ib-write-gpu', subject: 'mlx5_0/0000:41:00.0', outcome: 'failed', runs: 1, lastTs: 2000 },
    { probe: 'ib-write-gpu', subject: 'mlx5_0/0000:41:00.0', outcome: 'budget', runs: 1, lastTs: 3000 },
    { probe: 'ib-write-host', subject: 'mlx5_0', outcome: 'ok', runs: 2, lastTs: 2000 },
    { probe: 'ib-write-host', subject: 'rxe@eth0', outcome: 'ok', runs: 1, lastTs: 4000 },
    { probe: 'nvbw-d2h', subject: 'device_to_host_memcpy_ce', outcome: 'unusable', runs: 2, lastTs: 2000 },
  ]);
});

t.test('no file yet: nothing counted', async (t) => {
  t.strictSame(countProbeRuns(path.join(dir, 'none'), 'gpu001'), []);
});
