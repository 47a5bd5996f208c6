// The agent's read-ahead thread (host/read-ahead.ts): reads the live node's PCI `config` files it is sent, each
// part by part as the inventory reads it (parsers/pci-config.ts sparseConfig, through FsHost's own readParts), and
// answers each with its ReadResult, one message a file, in the order sent (null: not a sysfs here, read it yourself).
// On a VM every dword of config space is a trapped access (~20-30 µs): done here, they overlap the agent's other
// reads of the same Prolog. Bundled as dist/config-read-worker.js and .cjs (scripts/shapes.mjs).
import { parentPort } from 'node:worker_threads';
import { sparseConfig } from '../parsers/pci-config.js';
import { FsHost } from './fs-host.js';
import type { ReadAheadAnswer, ReadAheadAsk } from './read-ahead.js';

const port = parentPort;
if (port === null) throw new Error('config-read-worker: not started as a worker thread');
const live = new FsHost('/');
// Each answer goes as soon as its file is read: the judgement may take the first while the worker reads the next.
port.on('message', async (ask: ReadAheadAsk) => {
  for (const path of ask.paths) {
    const r = live.readParts ? await live.readParts(path, sparseConfig) : null;
    port.postMessage({ gen: ask.gen, path, r } satisfies ReadAheadAnswer);
  }
});
