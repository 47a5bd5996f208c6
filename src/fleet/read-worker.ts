// A worker thread of `fleet report`'s read pool (read.ts): reads the snapshots it is sent through the one engine
// (readNode) and posts back each node's inventory split (digest.ts): its key and own fields, the shared part only
// the first time this worker meets the key (the main thread keeps it per key); or why the snapshot could not be
// read. Bundled as dist/fleet-read-worker.js (scripts/bundle.mjs): the pool starts it from that file.
import { parentPort } from 'node:worker_threads';
import { splitInventory } from './digest.js';
import { readSnapshotNode, type WorkerJob, type WorkerAnswer } from './read-one.js';

const port = parentPort;
if (port === null) throw new Error('fleet-read-worker: not started as a worker thread');
const sent = new Set<string>();
port.on('message', (job: WorkerJob) => {
  void readSnapshotNode(job.node, job.file).then(
    (r): void => {
      if ('why' in r) return port.postMessage({ i: job.i, why: r.why } satisfies WorkerAnswer);
      const { key, own, bytes } = splitInventory(r.inv);
      const first = !sent.has(key);
      sent.add(key);
      port.postMessage({ i: job.i, key, own, ...(first ? { shared: bytes } : {}) } satisfies WorkerAnswer);
    },
    (e: unknown): void => port.postMessage({ i: job.i, fatal: e instanceof Error ? (e.stack ?? e.message) : String(e) } satisfies WorkerAnswer),
  );
});
