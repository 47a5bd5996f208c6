// The manifest's `listed`: a directory listing the recording did not make is unknown on replay, never the empty or
// partial list of what the tree happens to hold; an entry absent from a listed directory is absent, for every Host
// method. The case: a current snapshot of the bundled H200 capture, its manifest edited.
import t, { type Test } from 'tap';
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { FsHost } from '../../src/host/fs-host.js';
import { readSnapshotNode } from '../../src/fleet/read-one.js';
import { openSnapshot } from '../../src/snapshot/open.js';
import { readTar, writeTar, type TarEntry } from '../../src/snapshot/tar.js';
import { cli } from '../helpers/cli.js';
import { H200 } from '../helpers/paths.js';
import { answers, every } from './_answers.js';
import { VERSION } from '../../src/version.js';

interface Manifest {
  listed?: string[];
  host: string | null;
}

function current(t: Test): { dir: string; entries: TarEntry[]; manifest: Manifest } {
  const dir = t.testdir({});
  const file = path.join(dir, 'h200.tar.gz');
  const r = cli(['snapshot', '--root', H200, '--out', file]);
  t.equal(r.code, 0, r.stderr);
  const entries = readTar(gunzipSync(readFileSync(file)));
  return { dir, entries, manifest: JSON.parse(Buffer.from(entries.find((e) => e.path === 'manifest.json')!.data!).toString('utf8')) as Manifest };
}

async function withListed(dir: string, name: string, entries: TarEntry[], edit: (listed: string[]) => string[] | undefined): Promise<string> {
  const out = entries.map((e) => {
    if (e.path !== 'manifest.json') return e;
    const m = JSON.parse(Buffer.from(e.data!).toString('utf8')) as Manifest;
    const l = edit(m.listed ?? []);
    if (l === undefined) delete m.listed;
    else m.listed = l;
    return { ...e, data: Buffer.from(`${JSON.stringify(m, null, 2)}\n`) };
  });
  const file = path.join(dir, name);
  await fsp.writeFile(file, gzipSync(writeTar(out)));
  return file;
}

const PCI = '/sys/bus/pci/devices';

t.test('a recorded listing replays as the live one; the manifest names it', async (t) => {
  const { dir, entries, manifest } = current(t);
  t.ok(manifest.listed?.some((p) => p.startsWith('/sys/devices/') || p === PCI), 'the PCI device list (or its real directory) is recorded as listed');
  const h = await openSnapshot(await withListed(dir, 'same.tar.gz', entries, (l) => l));
  const live = new FsHost(H200);
  t.same(await h.list(PCI), await live.list(PCI));
});

t.test('a listing not recorded is unknown: a directory the tree holds only because a file below it was read', async (t) => {
  const { dir, entries, manifest } = current(t);
  const h = await openSnapshot(await withListed(dir, 'all.tar.gz', entries, (l) => l));
  t.notOk(manifest.listed?.includes('/sys/class'), '/sys/class itself was never listed');
  t.same(await h.list('/sys/class'), { ok: false, missing: false, reason: `listing not recorded by this snapshot (taken by gdrgate ${VERSION}): /sys/class` });
  // The PCI device list dropped from `listed`: unknown, and the fleet does not judge such a node.
  const real = (await h.realPath(PCI)) as { ok: true; value: string };
  const noPci = await withListed(dir, 'nopci.tar.gz', entries, (l) => l.filter((p) => p !== real.value));
  const d = await openSnapshot(noPci);
  const notListed = `listing not recorded by this snapshot (taken by gdrgate ${VERSION}): ${PCI}`;
  t.same(await d.list(PCI), { ok: false, missing: false, reason: notListed });
  const node = await readSnapshotNode('gpu0001', noPci);
  t.same(node, { why: `the snapshot's PCI device list is unknown (${PCI}: ${notListed})` }, 'fleet report: not judged');
  // A snapshot from before the field: its listings are taken as they are.
  const old = await openSnapshot(await withListed(dir, 'old.tar.gz', entries, () => undefined));
  t.equal((await old.list('/sys/class')).ok, true);
});

t.test('an entry absent from a listed directory is absent for every Host method, though `missing` does not name it', async (t) => {
  const { dir, entries } = current(t);
  const h = await openSnapshot(await withListed(dir, 'all.tar.gz', entries, (l) => l));
  const gone = `${PCI}/0000:ff:1f.7`;
  const enoent = { ok: false, missing: true, reason: `ENOENT: no such file or directory, snapshot ${gone}` };
  t.strictSame(await answers(h, gone), every(enoent), 'every read of it');
});
