// The read pool (src/fleet/read.ts): worker threads started from the bundled dist/fleet-read-worker.js read a
// generated fleet to the very views the in-process read gives, in input order, and an unreadable snapshot is
// a missing node there as in process. Without the worker file the read falls back to the process.
import t from 'tap';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFleet, type FleetProgress } from '../../src/fleet/read.js';
import { generateFleet } from '../gen/fleet.js';
import { scratchDir } from '../helpers/scratch.js';

const WORKER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/fleet-read-worker.js');

t.test('the pool reads what the process reads, in order; an unreadable snapshot is a missing node', { skip: existsSync(WORKER) ? false : 'dist/fleet-read-worker.js absent (npm run build)' }, async (t) => {
  const dir = scratchDir('gdrgate-read-pool-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const plan = await generateFleet(dir, { n: 6, seed: 7, spools: false });
  writeFileSync(path.join(dir, 'broken.tar.gz'), 'not a gzip stream');
  const jobs = [
    ...plan.map((n) => ({ node: n.name, file: path.join(dir, `${n.name}.tar.gz`) })),
    { node: 'broken', file: path.join(dir, 'broken.tar.gz') },
    { node: 'gone', file: path.join(dir, 'gone.tar.gz') },
  ];
  const inProcess = await readFleet(jobs, { workers: 0 });
  const seen: FleetProgress[] = [];
  const pooled = await readFleet(jobs, { workers: 2, workerFile: WORKER, onProgress: (p) => void seen.push(p) });
  t.same(pooled.read.map((r) => r.node), plan.map((n) => n.name), 'every generated node read, in input order');
  t.same(pooled.read.map((r) => r.view), inProcess.read.map((r) => r.view), 'the same views as in process');
  t.same(pooled.read.map((r) => r.key), inProcess.read.map((r) => r.key), 'under the same keys');
  const clean = plan.flatMap((n, i) => (!n.fault || n.fault.kind === 'weak-rail' ? [i] : []));
  t.equal(clean.length, 2, 'two nodes of the clean tree (no fault, and a weak rail)');
  t.equal(pooled.read[clean[1]!]!.view, pooled.read[clean[0]!]!.view, 'alike nodes share one view object');
  const missing = (ms: readonly { node: string; why: string }[]): string[] => ms.map((m) => `${m.node}: ${m.why}`).sort();
  t.same(missing(pooled.missing), missing(inProcess.missing), 'the same missing nodes, for the same reasons');
  t.same(pooled.missing.map((m) => m.node).sort(), ['broken', 'gone']);
  t.same(seen.map((p) => p.done), [...Array(jobs.length + 1).keys()], 'progress counts every node once');
});

t.test('without the worker file the read stays in process', async (t) => {
  const dir = scratchDir('gdrgate-read-pool-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const plan = await generateFleet(dir, { n: 2, seed: 3, spools: false });
  const r = await readFleet(plan.map((n) => ({ node: n.name, file: path.join(dir, `${n.name}.tar.gz`) })), { workers: 2, workerFile: path.join(dir, 'no-such-worker.js') });
  t.same(r.read.map((x) => x.node), plan.map((n) => n.name));
  t.same(r.missing, []);
});
