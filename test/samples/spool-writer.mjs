// Test helper, forked 50 times by spool.test.ts: appends batches to one spool and reports what the API said.
// argv: <dir holding transpiled spool.js> <spool dir> <writer id> <batches> <batch size> <maxBytes> <keep>
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modDir, dir, id, batches, size, maxBytes, keep] = process.argv.slice(2);
const { appendSamples } = await import(pathToFileURL(join(modDir, 'spool.js')).href);
const { makeSample } = await import(pathToFileURL(join(modDir, 'sample.js')).href);

const recipe = {
  tool: 'ib_write_bw', args: ['-d', 'mlx5_0', '-s', '65536', '-F', '--report_gbits', '--use_cuda=0'], msgSize: 65536,
  iterations: 5000, durationS: null, qps: 1, numaNode: 0, direction: 'gpu->nic',
};
const opts = { dir, maxBytes: Number(maxBytes), keep: Number(keep) };
let written = 0;
const failures = [];
let seq = 0;
for (let b = 0; b < Number(batches); b++) {
  const batch = [];
  for (let i = 0; i < Number(size); i++, seq++) {
    batch.push(makeSample({
      ts: Date.now(), node: `w${id}`, job: String(seq), probe: 'gdr-write', recipe, gpu: '0000:1b:00.0', nic: 'mlx5_0',
      bytes: 65536, value: 90 + (seq % 10), unit: 'Gb/s',
    }));
  }
  const r = appendSamples(opts, batch);
  if (r.ok) written += r.written;
  else failures.push(`${r.code}: ${r.message}`);
}
process.send?.({ id: Number(id), written, failures });
