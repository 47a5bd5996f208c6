// A worker thread of `fleet report`'s read pool (read.ts): reads the snapshots it is sent through the one engine
// (readNode) and posts back each node's inventory, or why the snapshot could not be read. Bundled as
// dist/fleet-read-worker.js (scripts/bundle.mjs): the pool starts it from that file.
import { parentPort } from 'node:worker_threads';
import { readSnapshotNode, type WorkerJob, type WorkerAnswer } from './read-one.js';

const port = parentPort;
if (port === null) throw new Error('fleet-read-worker: not started as a worker thread');
port.on('message', (job: WorkerJob) => {
  void readSnapshotNode(job.node, job.file).then(
    (r): void => port.postMessage({ i: job.i, ...r } satisfies WorkerAnswer),
    (e: unknown): void => port.postMessage({ i: job.i, fatal: e instanceof Error ? (e.stack ?? e.message) : String(e) } satisfies WorkerAnswer),
  );
});
