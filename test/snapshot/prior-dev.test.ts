// A capture's own /dev listing (capture/dev.json, or a snapshot's manifest) is untrusted input: entries of another shape are left out of the new snapshot, which is still written.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openSnapshot } from '../../src/snapshot/open.js';
import { CLI, H200 } from '../helpers/paths.js';

const snapshot = (root: string, out: string) => spawnSync(process.execPath, [CLI, 'snapshot', '--root', root, '--out', out], { encoding: 'utf8', timeout: 60_000 });

async function manifestDev(file: string): Promise<unknown> {
  const r = await (await openSnapshot(file)).readText('/manifest.json');
  return r.ok ? (JSON.parse(r.value) as { dev?: unknown }).dev : r.reason;
}

t.test('capture/dev.json with null, non-string and out-of-/dev entries: snapshot written, only the well-formed entries kept', async (t) => {
  const dir = t.testdir();
  const root = path.join(dir, 'cap');
  cpSync(H200, root, { recursive: true, verbatimSymlinks: true });
  t.equal(snapshot(root, path.join(dir, 'clean.tgz')).status, 0, 'the capture as it is');
  const clean = await manifestDev(path.join(dir, 'clean.tgz'));
  t.equal(Array.isArray(clean) && clean.length, 6, "the capture's 6 /dev entries");
  const file = path.join(root, 'capture/dev.json');
  const junk = [null, 5, 'x', { path: 5, mode: '0o20666', rdev: [195, 0] }, { path: '/etc/shadow', mode: '0o100600', rdev: null }, { path: '/dev/x', mode: 'x', rdev: null }, { path: '/dev/y', mode: '0o20666', rdev: [1] }, { path: '/dev/z', mode: '0o20666', rdev: ['a', 1] }];
  writeFileSync(file, JSON.stringify([...junk, ...(JSON.parse(readFileSync(file, 'utf8')) as unknown[])]));
  const r = snapshot(root, path.join(dir, 'junk.tgz'));
  t.equal(r.status, 0, 'written (before the change: an internal error, a TypeError on the null entry)');
  t.same(await manifestDev(path.join(dir, 'junk.tgz')), clean, 'the same entries as the clean capture');
  // A snapshot of that snapshot keeps them from its manifest.
  t.equal(snapshot(path.join(dir, 'junk.tgz'), path.join(dir, 'again.tgz')).status, 0);
  t.same(await manifestDev(path.join(dir, 'again.tgz')), clean, 'kept through the manifest');
  // A manifest.json of the capture's own whose dev holds junk beside them: the junk left out too.
  writeFileSync(path.join(root, 'manifest.json'), JSON.stringify({ dev: [...junk, { path: '/dev/w', kind: 'char', mode: '666', rdev: null }, ...(clean as unknown[])] }));
  t.equal(snapshot(root, path.join(dir, 'manifest.tgz')).status, 0);
  t.same(await manifestDev(path.join(dir, 'manifest.tgz')), clean, "the manifest's well-formed entries only");
});
