// A FUSE file system whose daemon never answers: this process opens /dev/fuse, mounts it and reads nothing from it. Every
// look into it that the kernel forwards (stat, open, a lookup in it) by a process it lets in then waits until the
// connection is closed (release()), which only SIGKILL interrupts. Mounted as `uid`'s with allow_other, as a job's user
// may mount on what they own (fusermount, with user_allow_other in /etc/fuse.conf): root waits too. What a test of it
// shows is that root never goes in; a tmpfs (user-tmpfs.ts) only shows what root says. Needs root, /dev/fuse, mount(8).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { scratchDir } from './scratch.js';

const MOUNT = '/usr/bin/mount';
const GUARD = `const { workerData: w } = require('node:worker_threads');
setTimeout(() => { if (Atomics.compareExchange(w.closed, 0, 0, 1) !== 0) return; require('node:fs').closeSync(w.fd); require('node:child_process').spawnSync(w.umount, ['--lazy', w.at]); }, w.ms);`;
const UMOUNT = '/usr/bin/umount';

export interface DeadFuse {
  readonly at: string;
  /** Closes the connection (every waiter gets ENOTCONN) and detaches the mount. Safe to call twice. */
  release(): void;
}

/**
 * Mounts a dead FUSE file system on `at` (a directory or a regular file) as `uid`'s; null when this machine cannot.
 * `guardMs`: a thread of its own closes the connection after that long, so that code under test which goes in, on
 * this process's own thread, gets ENOTCONN and the test goes on to fail, instead of waiting for ever.
 */
export function deadFuse(at: string, uid: number, o: { readonly guardMs?: number } = {}): DeadFuse | null {
  if (process.getuid?.() !== 0 || !fs.existsSync('/dev/fuse') || !fs.existsSync(MOUNT)) return null;
  const rootmode = fs.lstatSync(at).isDirectory() ? '40000' : '100000';
  let fd: number | null = fs.openSync('/dev/fuse', 'r+');
  // -i: no /sbin/mount.fuse helper (it would run the source as a program); fd=3 is the descriptor handed to mount(8).
  const r = spawnSync(MOUNT, ['-i', '-t', 'fuse', '-o', `fd=3,rootmode=${rootmode},user_id=${uid},group_id=${uid},allow_other`, 'gdrgate-dead', at], { stdio: ['ignore', 'ignore', 'pipe', fd], encoding: 'utf8' });
  if (r.status !== 0) {
    fs.closeSync(fd);
    return null;
  }
  // Whichever closes the descriptor first (the guard or release) sets it; the other leaves it (its number may be reused).
  const closed = new Int32Array(new SharedArrayBuffer(4));
  const guard = o.guardMs === undefined ? null : new Worker(GUARD, { eval: true, workerData: { fd, at, ms: o.guardMs, umount: UMOUNT, closed } });
  guard?.unref();
  const release = (): void => {
    void guard?.terminate();
    if (fd === null) return;
    if (Atomics.compareExchange(closed, 0, 0, 1) === 0) fs.closeSync(fd);
    fd = null;
    spawnSync(UMOUNT, ['--lazy', at]);
  };
  // Before scratch.ts's removal at exit, which would go in and wait.
  process.prependOnceListener('exit', release);
  return { at, release };
}

/** Whether a dead FUSE mount can be made here (root, /dev/fuse, a kernel and mount(8) that let it). */
export function canMountDeadFuse(): boolean {
  const d = scratchDir('gdrgate-fuse-probe-');
  const m = deadFuse(d, 65534);
  m?.release();
  return m !== null;
}
