// Benchmark (not a test): append 1M samples to a temp spool in batches, then stream them back into stats; prints ms and lines/s.
// Build first (`npx tsc -p tsconfig.json`); this imports dist/. Env: N (samples, default 1000000), BATCH (default 100).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { makeSample } from '../dist/samples/sample.js';
import { appendSamples, readSpool } from '../dist/samples/spool.js';
import { StatsAccumulator } from '../dist/samples/stats.js';

const N = Number(process.env.N ?? 1_000_000);
const BATCH = Number(process.env.BATCH ?? 100);
const dir = mkdtempSync(join(tmpdir(), 'gdrgate-bench-'));
const opts = { dir, maxBytes: 64 << 20, keep: 100 };

// 8 GPUs x 8 NICs, one recipe each, as an 8-rail node's epilog would record them.
const bases = [];
for (let g = 0; g < 8; g++) {
  for (let n = 0; n < 8; n++) {
    const recipe = {
      tool: 'ib_write_bw', args: ['-d', `mlx5_${n}`, '-s', '65536', '-n', '5000', '-F', '--report_gbits', `--use_cuda=${g}`],
      msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: g >> 2, direction: 'gpu->nic',
    };
    bases.push(makeSample({ ts: 0, node: 'gpu001', job: '1', probe: `gdr-write-gpu${g}-mlx5_${n}`, recipe, gpu: `0000:${(0x1b + g).toString(16)}:00.0`, nic: `mlx5_${n}`, bytes: 65536, value: 0, unit: 'Gb/s' }));
  }
}

const t0 = performance.now();
let failures = 0;
const start = Date.now();
for (let i = 0; i < N; i += BATCH) {
  const batch = [];
  for (let j = i; j < Math.min(N, i + BATCH); j++) {
    const b = bases[j % bases.length];
    batch.push({ ...b, ts: start + j, job: String(j >> 6), value: 380 + (j % 17) });
  }
  if (!appendSamples(opts, batch).ok) failures++;
}
const appendMs = performance.now() - t0;

const t1 = performance.now();
const acc = new StatsAccumulator();
const report = readSpool(dir, (s) => acc.add(s));
const readMs = performance.now() - t1;
const t2 = performance.now();
const stats = acc.result({ lastN: 1000 });
const statsMs = performance.now() - t2;

const bytes = report.files.reduce((a, f) => a + statSync(f).size, 0);
const mem = process.memoryUsage();
const rate = (ms) => Math.round(N / (ms / 1000)).toLocaleString('en-US');
console.log(`samples ${N.toLocaleString('en-US')} in batches of ${BATCH}; ${report.files.length} files, ${(bytes / 2 ** 20).toFixed(1)} MiB`);
console.log(`append        ${appendMs.toFixed(0)} ms  ${rate(appendMs)} lines/s  (failed batches: ${failures})`);
console.log(`read+parse    ${readMs.toFixed(0)} ms  ${rate(readMs)} lines/s  (read ${report.samples}, torn ${report.torn}, corrupt ${report.corrupt})`);
console.log(`stats         ${statsMs.toFixed(0)} ms  (${stats.length} keys, window lastN=1000)`);
console.log(`read+stats    ${(readMs + statsMs).toFixed(0)} ms  ${rate(readMs + statsMs)} lines/s`);
console.log(`memory after  rss ${(mem.rss / 2 ** 20).toFixed(0)} MiB, heap ${(mem.heapUsed / 2 ** 20).toFixed(0)} MiB, arrayBuffers ${(mem.arrayBuffers / 2 ** 20).toFixed(0)} MiB`);
console.log(`example       ${stats[0]?.key.probe}: p50 ${stats[0]?.all.p50} p99 ${stats[0]?.all.p99} min ${stats[0]?.all.min} count ${stats[0]?.all.count}`);
rmSync(dir, { recursive: true, force: true });
if (report.samples !== N || failures > 0) process.exitCode = 1;
