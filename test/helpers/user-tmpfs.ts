// A tmpfs mounted as an unprivileged user's (uid 65534): stands in for a job user's FUSE mount in the tests of what
// root does with mounts below a job's directory. Needs root and mount(8).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { scratchDir } from './scratch.js';

export const USER = 65534;
const MOUNT = '/usr/bin/mount';

/** Mounts a 64 KiB tmpfs at `dir`, owned by USER; whether it worked. */
export const mountAsUser = (dir: string): boolean => spawnSync(MOUNT, ['-t', 'tmpfs', '-o', `size=64k,uid=${USER},gid=${USER},mode=0755`, 'tmpfs', dir]).status === 0;

/** Whether this process may mount one here (root, mount(8), a kernel that lets it). */
export function canMountAsUser(): boolean {
  if (process.getuid?.() !== 0 || !existsSync(MOUNT)) return false;
  const d = scratchDir('gdrgate-mount-probe-');
  const ok = mountAsUser(d);
  if (ok) spawnSync('/usr/bin/umount', [d]);
  return ok;
}

/**
 * Detaches every mount below `top`, deepest first, found by a plain reading of /proc/self/mountinfo (each line split, its
 * fifth field unescaped), not by src/host/mounts.ts: a test of that code leaves nothing mounted when it is broken.
 */
export function unmountAllBelow(top: string): void {
  const mps = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => (l.split(' ')[4] ?? '').replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p.startsWith(`${top}/`));
  for (const m of mps.sort((a, b) => b.length - a.length)) spawnSync('/usr/bin/umount', ['--lazy', m]);
}
