// compare refuses a side whose PCI device list is unknown (a manifest-only snapshot, a listing not recorded):
// every device would otherwise compare as "missing", a critical difference the snapshot never vouched for.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { writeTar } from '../../src/snapshot/tar.js';
import { cli } from '../helpers/cli.js';
import { H200 } from '../helpers/paths.js';

t.test('a manifest-only snapshot against a real one: refused (exit 2), naming why, no "missing" device', async (t) => {
  const dir = t.testdir({});
  const empty = path.join(dir, 'gpu0001.tar.gz');
  const manifest = JSON.stringify({ tool: 'gdrgate', kind: 'snapshot', format: 1, version: '0.1.0', host: 'gpu0001', missing: [], listed: [] });
  writeFileSync(empty, gzipSync(writeTar([{ path: 'manifest.json', kind: 'file', mode: 0o644, mtime: 0, data: Buffer.from(manifest) }])));
  const r = cli(['compare', empty, H200]);
  t.equal(r.code, 2, r.stdout);
  t.equal(r.stdout, '');
  t.match(r.stderr, /gpu0001\.tar\.gz: its PCI device list is unknown \(\/sys\/bus\/pci\/devices: not recorded by this snapshot/);
  const same = cli(['compare', H200, H200]);
  t.equal(same.code, 0, 'a side that knows its devices is compared as before');
});
