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

/**
 * Detaches every mount strictly below `dir` (umount2 MNT_DETACH: the mount leaves the tree at once and nothing asks its
 * file system), deepest first. Returns what could not be detached (empty: none left).
 */
export async function detachMountsBelow(dir: string, exec: Exec = new ExecaExec()): Promise<string[]> {
  const left: string[] = [];
  for (const mp of mountsBelow(dir)) {
    const r = await exec.run(UMOUNT, ['--lazy', '--no-canonicalize', '--', mp], { timeoutMs: 5_000 });
    if (r.exitCode !== 0) left.push(`${mp}: ${r.error ?? (r.timedOut ? 'umount timed out' : r.stderr.trim() || `umount exit ${String(r.exitCode)}`)}`);
  }
  return left.length ? left : mountsBelow(dir).map((mp) => `${mp}: still mounted`);
}
