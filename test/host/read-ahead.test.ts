// The agent's read-ahead of PCI config space (src/host/read-ahead.ts): a worker thread started from the bundled
// dist/config-read-worker.js reads, as a request begins, the config files the previous judgement read, and the next
// judgement takes those answers instead of reading them itself. On this machine's live sysfs, its own PCI functions.
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, constants, copyFileSync, existsSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import type { ReadResult } from '../../src/host/host.js';
import { ReadAhead } from '../../src/host/read-ahead.js';
import { parsePciConfig, sparseConfig } from '../../src/parsers/pci-config.js';

const WORKER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/config-read-worker.js');
const DEVICES = '/sys/bus/pci/devices';
const functions = existsSync(DEVICES) ? readdirSync(DEVICES) : [];
const skip = !existsSync(WORKER) ? 'dist/config-read-worker.js absent (npm run build)' : functions.length === 0 ? 'no PCI function in this machine\'s sysfs' : false;
const live = new FsHost('/');

/** What the checks take from a config read: the IDs and every capability's place (a status bit may change between reads). */
const decoded = (r: ReadResult<Uint8Array>): unknown => {
  if (!r.ok) return r;
  const c = parsePciConfig(r.value);
  return { length: r.value.length, vendorId: c.vendorId, deviceId: c.deviceId, classCode: c.classCode, caps: c.capabilities, ext: c.extCapabilities };
};

t.test('a later judgement takes the worker\'s reads of the files the one before read; the rest is read in place', { skip }, async (t) => {
  const ra = await ReadAhead.start(WORKER);
  t.teardown(() => ra.close());
  t.equal(ra.broken, null);
  const files = functions.map((f) => `${DEVICES}/${f}/config`);
  const gone = `${DEVICES}/0000:ff:1f.7/config`;
  const direct = await Promise.all(files.map(async (f) => decoded(await live.readParts!(f, sparseConfig))));

  ra.begin(); // the first request: nothing read before it, nothing sent
  const first = ra.wrap(live);
  t.not(first, live);
  t.same(await Promise.all(files.map(async (f) => decoded(await first.readParts!(f, sparseConfig)))), direct);
  t.same([ra.served, ra.inPlace], [0, files.length]);

  ra.begin(); // the second: each of those read by the worker
  const second = ra.wrap(live);
  t.same(await Promise.all(files.map(async (f) => decoded(await second.readParts!(f, sparseConfig)))), direct);
  t.same([ra.served, ra.inPlace], [files.length, files.length]);
  // A file no judgement read before: in place, and the worker's the next time; a missing one is missing either way.
  t.same(await second.readParts!(gone, sparseConfig), { ok: false, missing: true, reason: `ENOENT: no such file or directory, open '${gone}'` });
  t.same([ra.served, ra.inPlace], [files.length, files.length + 1]);

  ra.begin();
  const third = ra.wrap(live);
  t.same(await third.readParts!(gone, sparseConfig), { ok: false, missing: true, reason: `ENOENT: no such file or directory, open '${gone}'` });
  t.same([ra.served, ra.inPlace], [files.length + 1, files.length + 1]);
  // Another picker than the inventory's is never the worker's: read in place, not counted.
  t.same(await third.readParts!(files[0]!, (at) => at(0, 2).length), { ok: true, value: 2 });
  // A Host of an earlier request reads in place once a new one began: its answers were dropped.
  ra.begin();
  t.same(decoded(await third.readParts!(files[0]!, sparseConfig)), direct[0]);
  t.same([ra.served, ra.inPlace], [files.length + 1, files.length + 1]);
});

t.test('without a worker, or over a capture, every read is in place', { skip }, async (t) => {
  const none = await ReadAhead.start(null);
  t.equal(none.broken, 'no config-read-worker file beside the program');
  none.begin();
  const h = none.wrap(live);
  const f = `${DEVICES}/${functions[0]}/config`;
  await h.readParts!(f, sparseConfig);
  none.begin();
  t.same(decoded(await none.wrap(live).readParts!(f, sparseConfig)), decoded(await live.readParts!(f, sparseConfig)));
  t.same([none.served, none.inPlace], [0, 2]);
  const capture = new FsHost(path.resolve('examples'));
  t.equal(none.wrap(capture), capture);
});

t.test('a worker that ends: its waits end, and the judgement reads in place', { skip }, async (t) => {
  const ra = await ReadAhead.start(WORKER);
  const f = `${DEVICES}/${functions[0]}/config`;
  ra.begin();
  await ra.wrap(live).readParts!(f, sparseConfig);
  ra.begin(); // sent
  const h = ra.wrap(live);
  await ra.close(); // before its answer was taken
  t.equal(ra.broken, 'closed');
  t.same(decoded(await h.readParts!(f, sparseConfig)), decoded(await live.readParts!(f, sparseConfig)));
  t.same([ra.served, ra.inPlace], [0, 2]);
});

t.test('a worker file someone other than root could change is never started', { skip }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gdrgate-ra-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const copy = path.join(dir, 'config-read-worker.js');
  copyFileSync(WORKER, copy);
  chmodSync(copy, 0o666);
  const ra = await ReadAhead.start(copy);
  t.equal(ra.broken, `${copy} is writable by anyone (mode 666)`);
  ra.begin();
  const f = `${DEVICES}/${functions[0]}/config`;
  await ra.wrap(live).readParts!(f, sparseConfig);
  ra.begin();
  await ra.wrap(live).readParts!(f, sparseConfig);
  t.same([ra.served, ra.inPlace], [0, 2]);
});

t.test('a worker stuck in a read: given up once overdue, said once, every read in place; the agent\'s stop does not wait for it', { skip }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gdrgate-ra-'));
  const fifo = path.join(dir, 'fifo');
  execFileSync('/usr/bin/mkfifo', [fifo]);
  // A stand-in worker whose read blocks in the kernel, as a config read waiting on a device would: open(2) of a FIFO
  // nobody writes to.
  const stuck = path.join(dir, 'stuck-worker.mjs');
  writeFileSync(stuck, `import { parentPort } from 'node:worker_threads'; import fs from 'node:fs';\nparentPort.on('message', () => fs.openSync(${JSON.stringify(fifo)}, 'r'));\n`, { mode: 0o644 });
  t.teardown(() => {
    // Opened read-write (never blocks, a writer to the FIFO): a thread still in its open(2) goes on, and ends.
    closeSync(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
    rmSync(dir, { recursive: true, force: true });
  });
  const said: string[] = [];
  const ra = await ReadAhead.start(stuck, { onBroken: (why) => said.push(why), stuckMs: 300 });
  const f = `${DEVICES}/${functions[0]}/config`;
  ra.begin();
  await ra.wrap(live).readParts!(f, sparseConfig);
  ra.begin(); // sent: the worker blocks; this request's judgement is the agent's deadline's to end
  ra.begin(); // an answer outstanding, not yet overdue: nothing sent
  t.same(decoded(await ra.wrap(live).readParts!(f, sparseConfig)), decoded(await live.readParts!(f, sparseConfig)));
  t.same(said, []);
  await new Promise((r) => setTimeout(r, 400));
  ra.begin();
  t.match(ra.broken, /^its worker has not answered for \d+\.\d s \(a config read stuck in the kernel\?\)$/);
  t.same(said, [ra.broken]);
  await ra.wrap(live).readParts!(f, sparseConfig);
  ra.begin();
  await ra.wrap(live).readParts!(f, sparseConfig);
  t.same([ra.served, ra.inPlace, said.length], [0, 4, 1]);
  const t0 = Date.now();
  await ra.close(200);
  t.ok(Date.now() - t0 < 5000, 'close() returns although the thread cannot be ended');
});
