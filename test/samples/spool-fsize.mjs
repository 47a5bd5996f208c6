// Test helper, run by spool.test.ts under `ulimit -f`: appends one batch to a spool whose file the limit cuts short,
// and prints what appendSamples said (the jobs it reports unwritten among them) as one JSON line.
// argv: <dir holding transpiled spool.js> <spool dir> <first job> <batch size>
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modDir, dir, first, size] = process.argv.slice(2);
const { appendSamples } = await import(pathToFileURL(join(modDir, 'spool.js')).href);
const { makeSample } = await import(pathToFileURL(join(modDir, 'sample.js')).href);
const recipe = { tool: 'ib_write_bw', args: ['-d', 'mlx5_0', '-s', '65536'], msgSize: 65536, iterations: 5000, durationS: null, qps: 1, numaNode: 0, direction: 'gpu->nic' };
const batch = Array.from({ length: Number(size) }, (_, i) => makeSample({ ts: Date.now(), node: 'gpu001', job: String(Number(first) + i), probe: 'gdr-write', recipe, gpu: null, nic: 'mlx5_0', bytes: 65536, value: 92.5, unit: 'Gb/s' }));
const r = appendSamples({ dir }, batch);
process.stdout.write(`${JSON.stringify({ ok: r.ok, code: r.ok ? null : r.code, bytes: r.bytes, unwritten: r.unwritten.map((s) => s.job) })}\n`);
