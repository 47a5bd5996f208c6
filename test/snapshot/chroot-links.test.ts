// Inside a capture directory or a snapshot, an absolute link resolves against the root as a chroot would: a live
// node's /var/run -> /run reads the capture's /run, and its replay judges and notes exactly as the directory did;
// only `..` above the root still leaves it and is refused.
import { cpSync, lstatSync, mkdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { evaluateNode } from '../../src/engine/evaluate.js';
import { FsHost } from '../../src/host/fs-host.js';
import { openHost } from '../../src/host/open.js';
import { buildSnapshot } from '../../src/snapshot/build.js';
import { CHECK_IDS } from '../../src/checks/index.js';
import { H200 } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const PIDFILES = ['/var/run/slurmd.pid'];
const dir = scratchDir('gdrgate-chroot-');

/** The capture, a snapshot of it, and what each says through the gate. */
async function judged(root: string) {
  const ev = await evaluateNode({ root, baseline: null, node: null, trust: [], checks: CHECK_IDS, pidFiles: PIDFILES });
  return { notes: ev.inv?.notes ?? [], findings: ev.findings.map((f) => `${f.status} ${f.check} ${f.subject} ${f.message}`) };
}

async function snapshotOf(root: string, live: boolean, name: string): Promise<string> {
  const snap = await buildSnapshot(live ? new FsHost('/') : new FsHost(root), live, { commands: false, now: new Date(0), uid: null, slurmdPidFiles: PIDFILES });
  const file = path.join(dir, name);
  writeFileSync(file, snap.gz);
  return file;
}

t.test('a capture with /var/run -> /run: read, snapshotted and replayed inside the root', async (t) => {
  const root = path.join(dir, 'node');
  cpSync(H200, root, { recursive: true, verbatimSymlinks: true });
  mkdirSync(path.join(root, 'run'));
  mkdirSync(path.join(root, 'var'), { recursive: true });
  symlinkSync('/run', path.join(root, 'var/run'));
  writeFileSync(path.join(root, 'run/slurmd.pid'), '1\n'); // the capture's proc/1/limits: slurmd's limits
  const h = new FsHost(root);
  t.same(await h.readText('/var/run/slurmd.pid'), { ok: true, value: '1\n' });
  t.same(await h.realPath('/var/run/slurmd.pid'), { ok: true, value: '/run/slurmd.pid' });
  const file = await snapshotOf(root, false, 'node.tar.gz');
  const s = await openHost(file);
  t.same(await s.readText('/var/run/slurmd.pid'), { ok: true, value: '1\n' }, 'the snapshot holds the target and resolves the link the same');
  t.same(await s.realPath('/var/run/slurmd.pid'), { ok: true, value: '/run/slurmd.pid' });
  const a = await judged(root);
  const b = await judged(file);
  t.same(b, a, 'the replay: the same notes and findings as the directory');
  t.same(a.notes.filter((n) => /leaves the root/.test(n)), [], 'no note of a link leaving the root');
});

t.test('`..` above the root still leaves it: refused, in a directory and in a snapshot', async (t) => {
  const root = path.join(dir, 'up');
  cpSync(H200, root, { recursive: true, verbatimSymlinks: true });
  symlinkSync('../../../../..', path.join(root, 'sys/up'));
  const r = await new FsHost(root).readText('/sys/up/etc/hostname');
  t.same(r, { ok: false, missing: false, reason: 'unreadable: leaves the root: a link target climbs above it (resolving /sys/up/etc)' });
});

const liveRun = ((): boolean => {
  try {
    return lstatSync('/var/run').isSymbolicLink() && readlinkSync('/var/run') === '/run';
  } catch {
    return false;
  }
})();

t.test('a live snapshot of this machine, whose /var/run -> /run: the replay reads /var/run as the live root does', { skip: liveRun ? false : 'this machine has no /var/run -> /run' }, async (t) => {
  const file = await snapshotOf('/', true, 'live.tar.gz');
  const s = await openHost(file);
  const live = new FsHost('/');
  const want = await live.readText('/var/run/slurmd.pid');
  const got = await s.readText('/var/run/slurmd.pid');
  t.same({ ok: got.ok, missing: got.ok ? null : got.missing }, { ok: want.ok, missing: want.ok ? null : want.missing }, 'present or absent alike');
  const replay = await judged(file);
  t.same(replay.notes.filter((n) => /leaves the root/.test(n)), [], 'no note of a link leaving the root');
});
