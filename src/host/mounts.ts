// Mounts below a directory, from this process's /proc/self/mountinfo: the kernel's table, read without entering
// any of them. A job's user may mount a FUSE file system on their job's directory or a file in it (fusermount mounts
// on what the user owns); with allow_other, root's every lstat, open or realpath there waits on that user's daemon,
// uninterruptibly (the review of e8e7aec wedged the agent and the Epilog so). Root looks here first and never enters.
import fs from 'node:fs';
import { ExecaExec, type Exec } from './exec.js';

/** mountinfo's octal escapes (show_mountinfo: space, tab, newline, backslash as \ooo). */
const unescape = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/** The mount points strictly below `dir` (deepest first); none when mountinfo cannot be read. */
export function mountsBelow(dir: string, table = '/proc/self/mountinfo'): string[] {
  let text: string;
  try {
    text = fs.readFileSync(table, 'utf8');
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const mp = line.split(' ')[4];
    if (mp === undefined) continue;
    const p = unescape(mp);
    if (p.startsWith(`${dir}/`)) out.push(p);
  }
  return out.sort((a, b) => b.length - a.length);
}

/** The first of `mounts` at `path` or below it, or null. */
export function mountAt(mounts: readonly string[], path: string): string | null {
  return mounts.find((m) => m === path || m.startsWith(`${path}/`)) ?? null;
}

/** util-linux umount; --no-canonicalize: the path is not looked up (no stat into the mount). */
const UMOUNT = '/usr/bin/umount';

/** Of `mounts`, those below no other of them: detaching one (MNT_DETACH) takes every mount inside it along. */
export function outermost(mounts: readonly string[]): string[] {
  return mounts.filter((m) => !mounts.some((o) => o !== m && m.startsWith(`${o}/`)));
}

/**
 * Detaches `mounts` (umount2 MNT_DETACH: each leaves the tree at once and nothing asks its file system). Only the
 * outermost are named to umount: a path through a user's mount is looked up by their file system, which may answer
 * with a link. Before each, `take(mp)` makes every directory above the mount point root's alone (the kernel looks the
 * path up again at umount(2): a directory its user could still rename lets them swap in a link and aim the detach at
 * any mount on the node); one it throws for is left mounted. Returns what could not be detached (empty: none left).
 */
export async function detachMounts(mounts: readonly string[], take: (mp: string) => void, exec: Exec = new ExecaExec()): Promise<string[]> {
  const left: string[] = [];
  const outer = outermost(mounts);
  for (const mp of outer) {
    try {
      take(mp);
    } catch (e) {
      left.push(`${mp}: not detached, its path not taken back (${(e as Error).message})`);
      continue;
    }
    const r = await exec.run(UMOUNT, ['--lazy', '--no-canonicalize', '--', mp], { timeoutMs: 5_000 });
    if (r.exitCode !== 0) left.push(`${mp}: ${r.error ?? (r.timedOut ? 'umount timed out' : r.stderr.trim() || `umount exit ${String(r.exitCode)}`)}`);
  }
  if (left.length) return left;
  const now = new Set(mountsBelow('')); // every mount point: '' is below nothing but the root's children
  return outer.filter((mp) => now.has(mp)).map((mp) => `${mp}: still mounted`);
}
