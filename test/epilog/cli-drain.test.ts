// `gdrgate epilog` draining: a sustained fall drains once (the owned drain), a human's drain kept, a measurement of
// another GPU than planned never filed under the planned one nor drained, samples stamped in the future never judged.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseSampleLine } from '../../src/samples/sample.js';
import { appendSamples } from '../../src/samples/spool.js';
import { healthy, last, lines, probes } from './_cli.js';
import type { EpilogEnv } from './_env.js';

/** The GPU-memory band of a class whose paths do better than this one's 23.03 Gb/s (the real capture): warn < 40, fail < 30. */
function raiseGpuBand(e: EpilogEnv): void {
  const b = JSON.parse(readFileSync(e.baseline, 'utf8')) as { classes: { probes: { probe: string; warnBelow: number; failBelow: number }[] }[] };
  e.setEnvelopes(b.classes[0]!.probes.map((x) => (x.probe === 'ib-write-gpu' ? { ...x, warnBelow: 40, failBelow: 30 } : x)));
}

t.test('a sustained GPU↔NIC fall drains once with a gdrgate: bw- reason', async (t) => {
  const e = await healthy(3);
  const prom = path.join(e.dir, 'gdrgate.prom');
  raiseGpuBand(e);
  e.writeConfig(probes('healthy', { promFile: prom }));
  const runs = ['4', '5'].map((j) => e.epilog(j));
  // The drain restarts the judged window (probe-window.json): the next Epilog, on the node still drained, judges only
  // what was measured since (pending), never the samples that drained it once more.
  t.strictSame(runs.map((r) => r.code), [1, 0], 'exit 1 only once our reason is on the node');
  t.match(last(runs[0]!.stdout), /^gdrgate epilog node=gpu001 job=4 view=none removed=false probes=ran samples=3 result=unhealthy exit=1 \d+ms reason="gdrgate: bw-gpu-path mlx5_0\/0000:41:00.0 p50 23.03 Gb\/s over 4 \(want >= 30 Gb\/s\) job=4" action=drained$/);
  t.match(runs[0]!.stdout, /^FAIL bw-gpu-path mlx5_0\/0000:41:00\.0: GPU memory p50 23\.03 Gb\/s over 4 \(band: warn < 40, fail < 30 Gb\/s\) while host memory on mlx5_0 is healthy \(p50 92\.56 Gb\/s\)\n {5}GPU↔NIC path: GPUDirect RDMA from GPU memory is below its band while host memory on the same HCA is healthy, so the adapter and the fabric are fine and the fault is between this GPU and this NIC\.\n {5}-> Check pcie-link and pcie-acs on this GPU↔NIC path \(gdrgate check --only pcie-link,pcie-acs\), the IOMMU mode, and the GPUDirect mechanism \(nvidia_peermem loaded, or DMA-BUF with the open module\); compare gdrgate topo with the reference node\. \[server\]\nPASS bw-ok 0000:41:00\.0: nvbw-h2d p50 25\.17 GB\/s over 4 \(band: warn < 21\.39, fail < 17\.62 GB\/s\)\nPASS bw-ok mlx5_0: ib-write-host p50 92\.56 Gb\/s over 4 \(band: warn < 78\.68, fail < 64\.79 Gb\/s\)\ngdrgate epilog node=gpu001 job=4 view=none removed=false probes=ran samples=3 result=unhealthy exit=1 \d+ms reason="gdrgate: bw-gpu-path mlx5_0\/0000:41:00\.0 p50 23\.03 Gb\/s over 4 \(want >= 30 Gb\/s\) job=4" action=drained\n$/);
  t.equal(runs[0]!.stdout.split('\n').filter((l) => /^ *-> Check pcie-link and pcie-acs on this GPU↔NIC path/.test(l)).length, 1, 'the advice, once');
  t.match(last(runs[1]!.stdout), /^gdrgate epilog node=gpu001 job=5 view=none removed=false probes=ran samples=3 result=healthy exit=0 \d+ms action=none$/);
  t.strictSame(runs[1]!.stdout.split('\n').filter((l) => l.startsWith('SKIP')).map((l) => l.split(/\s+/).slice(0, 3).join(' ')), ['SKIP bw-pending 0000:41:00.0:', 'SKIP bw-pending mlx5_0:', 'SKIP bw-pending mlx5_0/0000:41:00.0:'], 'judged from the one run since the drain: pending');
  t.equal(e.drainCalls().length, 1, 'one scontrol drain');
  t.equal(e.drainCalls()[0], 'update nodename=gpu001 state=drain reason=gdrgate: bw-gpu-path mlx5_0/0000:41:00.0 p50 23.03 Gb/s over 4 (want >= 30 Gb/s) job=4');
  t.equal(lines(e).length, 5 * 3, 'spool: 3 samples per probing epilog, 5 epilogs');
  const log = readFileSync(e.log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  const four = log.find((l) => l.msg === 'gdrgate epilog' && l.job === '4');
  t.same([four?.result, four?.exitCode, four?.action, four?.reason], ['unhealthy', 1, 'drained', 'gdrgate: bw-gpu-path mlx5_0/0000:41:00.0 p50 23.03 Gb/s over 4 (want >= 30 Gb/s) job=4']);
  t.same(four?.summary, { pass: 2, warn: 0, fail: 1, skip: 0, error: 0 });
  t.same((four?.findings as { status: string; code: string; subject: string }[]).map((f) => `${f.status} ${f.code} ${f.subject}`), ['fail bw-gpu-path mlx5_0/0000:41:00.0'], 'the log holds the one failing finding');
  t.match(readFileSync(prom, 'utf8'), /^gdrgate_bandwidth_samples\{node="gpu001",probe="ib-write-gpu",gpu="0000:41:00\.0",nic="mlx5_0",direction="gpu->nic->gpu",recipe="[0-9a-f]{12}",window="all"\} 5$/m);
});

t.test('ib_write_bw measured another GPU (82:00) than planned (0000:41:00.0): a failed probe, no sample under 0000:41:00.0, no drain', async (t) => {
  // The real slow capture (10.50 Gb/s) was taken on the GPU at 82:00; filed under 0000:41:00.0 it used to drain the node.
  const e = await healthy(3);
  const prom = path.join(e.dir, 'gdrgate.prom');
  e.writeConfig(probes('gpu-slow', { promFile: prom }));
  const runs = ['4', '5', '6', '7'].map((j) => e.epilog(j));
  t.strictSame(runs.map((r) => r.code), [0, 0, 0, 0], 'never exit 1');
  for (const r of runs) {
    t.match(last(r.stdout), /^gdrgate epilog node=gpu001 job=[4-7] view=none removed=false probes=ran samples=2 result=healthy exit=0 \d+ms action=none$/);
    t.equal(r.stdout.split('\n').filter((l) => l.startsWith('ERR  bw-probe-failed')).join('\n'), 'ERR  bw-probe-failed mlx5_0/0000:41:00.0: measured GPU 82:00, not 0000:41:00.0 (CUDA device 0): is CUDA_DEVICE_ORDER honoured?');
  }
  t.equal(e.drainCalls().length, 0, 'no drain');
  const gpuSamples = lines(e).map((l) => JSON.parse(l) as { probe: string; value: number }).filter((s) => s.probe === 'ib-write-gpu');
  t.strictSame(gpuSamples.map((s) => s.value), [23.03, 23.03, 23.03], 'only the healthy epilogs\' GPU samples');
  // Never silent: the failures are counted in the textfile beside the runs that gave samples (the 3 healthy Epilogs too).
  t.strictSame(readFileSync(prom, 'utf8').split('\n').filter((l) => l.startsWith('gdrgate_probe_runs_total')), [
    'gdrgate_probe_runs_total{node="gpu001",probe="ib-write-gpu",subject="mlx5_0/0000:41:00.0",outcome="ok"} 3',
    'gdrgate_probe_runs_total{node="gpu001",probe="ib-write-gpu",subject="mlx5_0/0000:41:00.0",outcome="failed"} 4',
    'gdrgate_probe_runs_total{node="gpu001",probe="ib-write-host",subject="mlx5_0",outcome="ok"} 7',
    'gdrgate_probe_runs_total{node="gpu001",probe="nvbw-h2d",subject="host_to_device_memcpy_ce",outcome="ok"} 7',
  ]);
  const at = (outcome: string): number => Number(/ (\S+)$/.exec(readFileSync(prom, 'utf8').split('\n').find((l) => l.startsWith(`gdrgate_probe_last_run_timestamp_seconds{node="gpu001",probe="ib-write-gpu",subject="mlx5_0/0000:41:00.0",outcome="${outcome}"}`)) ?? '')?.[1]);
  t.ok(at('failed') > at('ok'), `the newest failed run (${at('failed')}) after the newest ok one (${at('ok')})`);
});

t.test("a human's drain is never overwritten: nothing written, exit 0", async (t) => {
  const e = await healthy(2);
  e.adminDrain('rack maintenance');
  raiseGpuBand(e);
  const r = ['3', '4', '5'].map((j) => e.epilog(j));
  t.strictSame(r.map((x) => x.code), [0, 0, 0]);
  t.match(last(r[2]!.stdout), /^gdrgate epilog node=gpu001 job=5 view=none removed=false probes=ran samples=3 result=unhealthy exit=0 \d+ms reason="gdrgate: bw-gpu-path mlx5_0\/0000:41:00\.0 p50 23\.03 Gb\/s over 5 \(want >= 30 Gb\/s\) job=5" action=kept: node is IDLE\+DRAIN for a reason that is not ours \(rack maintenance\): left as it is$/);
  t.equal(e.drainCalls().length, 0);
});

t.test('slow samples stamped while the clock ran a year ahead: left out and counted, the fresh run judged on its true predecessors', async (t) => {
  // The real healthy GPU sample (23.03 Gb/s), re-stamped a year ahead at 10.5 Gb/s (below the 16.12 fail band): by ts
  // they were "the newest" five, so every later epilog judged them instead of its own measurement and drained.
  const e = await healthy(3);
  const prom = path.join(e.dir, 'gdrgate.prom');
  e.writeConfig(probes('healthy', { promFile: prom }));
  const real = lines(e).map(parseSampleLine).find((s) => s?.probe === 'ib-write-gpu');
  const ahead = Date.now() + 365 * 86_400_000;
  t.ok(real && appendSamples({ dir: e.spool }, Array.from({ length: 5 }, (_, i) => ({ ...real, ts: ahead + i, value: 10.5 }))).ok, 'future samples written');
  const r = e.epilog('4');
  t.equal(r.code, 0);
  t.match(last(r.stdout), /^gdrgate epilog node=gpu001 job=4 view=none removed=false probes=ran samples=3 result=healthy exit=0 \d+ms action=none$/);
  t.equal(e.drainCalls().length, 0, 'no drain');
  const text = readFileSync(prom, 'utf8');
  t.match(text, /^gdrgate_spool_skipped_lines\{node="gpu001",kind="future"\} 5$/m);
  t.match(text, /^gdrgate_bandwidth_bytes_per_second\{node="gpu001",probe="ib-write-gpu",gpu="0000:41:00\.0",nic="mlx5_0",direction="gpu->nic->gpu",recipe="[0-9a-f]{12}",window="recent",stat="p50"\} 2878750000$/m, 'recent p50 23.03 Gb/s');
  const log = readFileSync(e.log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  t.strictSame(log.filter((l) => l.future !== undefined).map((l) => [l.job, l.future, l.msg]), [['4', 5, 'epilog: spool samples stamped in the future (the clock ran ahead) left out of the statistics']]);
});
