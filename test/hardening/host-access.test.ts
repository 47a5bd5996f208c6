// Host.access() in every Host: FsHost answers access(2) under its root, the wrappers (the snapshot recorder,
// the drill overlay) pass it through, a snapshot cannot tell.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { DrillHost } from '../../src/drill/overlay.js';
import { FsHost } from '../../src/host/fs-host.js';
import { MemoHost } from '../../src/snapshot/memo.js';
import { parseSnapshot } from '../../src/snapshot/open.js';
import { buildSnapshot } from '../../src/snapshot/build.js';
import { accessProbe } from '../../src/task/access.js';
import { H200 } from '../helpers/paths.js';

t.test('every Host answers access(); wrappers pass it through', async (t) => {
  const root = t.testdir({ dev: { infiniband: { uverbs0: '', uverbs1: '' } } });
  fs.chmodSync(path.join(root, 'dev/infiniband/uverbs1'), 0o444);
  const fsHost = new FsHost(root);
  const root0 = process.getuid?.() === 0;
  for (const h of [fsHost, new MemoHost(fsHost), new DrillHost(fsHost, { kind: 'memlock', bytes: 65536 })]) {
    const name = h.constructor.name;
    t.same(await h.access('/dev/infiniband/uverbs0'), { access: 'rw' }, `${name}: a 0644 file of this uid`);
    if (!root0) t.match(await h.access('/dev/infiniband/uverbs1'), { access: /^denied$/, why: /^EACCES$/ }, `${name}: read-only`);
    t.match(await h.access('/dev/infiniband/uverbs9'), { access: /^unknown$/, why: /^ENOENT$/ }, `${name}: absent is unknown`);
    t.same(await accessProbe(h).rw('/dev/infiniband/uverbs0'), await h.access('/dev/infiniband/uverbs0'), `${name}: the probe asks the Host`);
  }
  const snap = parseSnapshot('h200.tar.gz', (await buildSnapshot(new FsHost(H200), false, { commands: false })).gz);
  t.same(await snap.access('/dev/nvidia0'), { access: 'unknown', why: 'a snapshot cannot answer access(2)' }, 'a snapshot cannot tell');
});
