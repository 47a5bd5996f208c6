// A worker thread of `fleet report`'s read pool (read.ts): reads the nodes it is sent (read-one.ts: the summary when
// it holds, else the snapshot) and posts back each node's view key and where its facts came from, the view itself
// only the first time this worker meets the key (the main thread keeps one view per key); or why the node could not
// be read. Bundled as dist/fleet-read-worker.js (scripts/bundle.mjs): the pool starts it from that file.
import { parentPort } from 'node:worker_threads';
import { viewKey } from './digest.js';
import { readFleetNode, type WorkerJob, type WorkerAnswer } from './read-one.js';

const port = parentPort;
if (port === null) throw new Error('fleet-read-worker: not started as a worker thread');
const sent = new Set<string>();
port.on('message', (job: WorkerJob) => {
  void readFleetNode(job.node, job.file, job.summary).then(
    (r): void => {
      if ('why' in r) return port.postMessage({ i: job.i, why: r.why } satisfies WorkerAnswer);
      const key = viewKey(r.view);
      const first = !sent.has(key);
      sent.add(key);
      port.postMessage({ i: job.i, key, source: r.source, note: r.note, ...(first ? { view: r.view } : {}) } satisfies WorkerAnswer);
    },
    (e: unknown): void => port.postMessage({ i: job.i, fatal: e instanceof Error ? (e.stack ?? e.message) : String(e) } satisfies WorkerAnswer),
  );
});
