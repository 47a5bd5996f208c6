// A kernel whose /proc/self/fdinfo names no mnt_id (before Linux 3.15): a job's directory cannot be held (host/held-dir.ts
// tells a mount on a name by it), so whether its user mounted on or in it cannot be told. The Prolog's removal and the
// Epilog's collection then leave the directory where it was and as it was, as for an unreadable mount table: it was set
// aside still its user's, where reclaimStale walked it by name (and the user, whose processes may still be in it, could
// mount in it first). Run in a mount namespace where /proc/<pid>/fdinfo is a directory of such files (root only).
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { scratchDir } from '../helpers/scratch.js';

const UNSHARE = '/usr/bin/unshare';
const USER = 4245;
const REPO = path.resolve(import.meta.dirname, '../..');
const skip = process.getuid?.() !== 0 ? 'unshare --mount: root only' : !existsSync(UNSHARE) ? `no ${UNSHARE}` : false;

t.test('without mnt_id in fdinfo a job directory is neither taken back, set aside nor walked', { skip }, (t) => {
  const work = scratchDir('gdrgate-no-mnt-id-');
  // fdinfo as Linux 3.8-3.14 wrote it (fs/proc/fd.c seq_show: pos and flags only), for every descriptor the child may hold.
  const fdinfo = path.join(work, 'fdinfo');
  mkdirSync(fdinfo);
  for (let fd = 0; fd < 1024; fd++) writeFileSync(path.join(fdinfo, String(fd)), 'pos:\t0\nflags:\t02100000\n');
  const stateDir = path.join(work, 'run');
  mkdirSync(stateDir, { mode: 0o711 });
  for (const job of ['7', '9']) {
    const dir = path.join(stateDir, `job-${job}`);
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(path.join(dir, 'task.json'), '{}\n');
    chownSync(dir, USER, USER);
  }
  const node = [process.execPath, '--experimental-transform-types', '--disable-warning=ExperimentalWarning', '--import=./test/helpers/ts-resolve.mjs', 'test/state/_no-mnt-id.ts', stateDir];
  const r = spawnSync(UNSHARE, ['--mount', '--propagation', 'private', '/bin/sh', '-c', `mount --bind ${fdinfo} /proc/$$/fdinfo && exec "$@"`, 'sh', ...node], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { remove: unknown; collect: unknown };
  const why = `${stateDir}: the kernel does not say which mount it lies on (/proc/self/fdinfo): a mount in it could not be told`;
  t.same(out.remove, { ok: false, why: `${stateDir}/job-7: ${why}`, setAside: null }, "the Prolog's removal");
  t.same(
    out.collect,
    { job: '9', ownerUid: null, task: null, taskWhy: why, removed: false, error: `${stateDir}/job-9: ${why}`, reclaimed: { removed: 0, left: 0, errors: [] } },
    "the Epilog's collection",
  );
  t.same(readdirSync(stateDir), ['job-7', 'job-9'], 'both left where they were, nothing set aside');
  t.same(['job-7', 'job-9'].map((d) => [statSync(path.join(stateDir, d)).uid, readdirSync(path.join(stateDir, d))]), [[USER, ['task.json']], [USER, ['task.json']]], 'not taken back, nothing in them removed');
  t.end();
});
