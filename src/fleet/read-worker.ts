// A worker thread of `fleet report`'s read pool (read.ts): reads the batches of nodes it is sent, in order (read-one.ts:
// the summary when it holds, else the snapshot), and answers each batch with one message: per node its view key and
// where its facts came from, the view itself only the first time this worker meets the key (the main thread keeps
// one view per key); or why the node could not be read. Bundled as dist/fleet-read-worker.js (scripts/bundle.mjs):
// the pool starts it from that file.
import { parentPort } from 'node:worker_threads';
import { viewKey } from './digest.js';
import { readFleetNode, type WorkerJob, type WorkerAnswer } from './read-one.js';

const port = parentPort;
if (port === null) throw new Error('fleet-read-worker: not started as a worker thread');
const sent = new Set<string>();

async function one(job: WorkerJob): Promise<WorkerAnswer> {
  try {
    const r = await readFleetNode(job.node, job.file, job.summary);
    if ('why' in r) return { i: job.i, why: r.why };
    const key = viewKey(r.view);
    const first = !sent.has(key);
    sent.add(key);
    return { i: job.i, key, source: r.source, note: r.note, time: r.time, ...(first ? { view: r.view } : {}) };
  } catch (e) {
    return { i: job.i, fatal: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
}

// Batches are answered in the order they came (a key's view travels with its first node, before any later one).
let queue: Promise<void> = Promise.resolve();
port.on('message', (jobs: WorkerJob[]) => {
  queue = queue.then(async () => {
    const answers: WorkerAnswer[] = [];
    for (const job of jobs) answers.push(await one(job));
    port.postMessage(answers);
  });
});
