// Mounts below a directory, from this process's /proc/self/mountinfo: the kernel's table, read without entering
// any of them. A job's user may mount a FUSE file system on their job's directory or a file in it (fusermount mounts
// on what the user owns); with allow_other, root's every lstat, open or realpath there waits on that user's daemon,
// uninterruptibly (the review of e8e7aec wedged the agent and the Epilog so). Root looks here first and never enters.
import fs from 'node:fs';
import path from 'node:path';
import { ExecaExec, type Exec } from './exec.js';

/** mountinfo's octal escapes (show_mountinfo: space, tab, newline, backslash as \ooo). */
const unescape = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
/** What show_mountinfo writes for `s` (fs/proc_namespace.c: seq_path_root with the escapes " \t\n\\"). */
const escape = (s: string): string => s.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);

/**
 * The mount points strictly below `dir` (deepest first). A table that cannot be read (EMFILE, ENOMEM) throws: which
 * paths are mounts cannot be told then, and every caller enters nothing below `dir` (it never reads as "none").
 */
export function mountsBelow(dir: string, table = '/proc/self/mountinfo'): string[] {
  let text: string;
  try {
    text = fs.readFileSync(table, 'utf8');
  } catch (e) {
    throw new Error(`${table} could not be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): which paths below ${dir} are mounts cannot be told, none is entered`);
  }
  // The table names a mount point by its real path; `dir` as the config spells it may reach it through a link (as
  // /var/run is /run) or end in a slash, and compared as written it found no mount at all. The mounts are matched
  // below the real path and given back as `dir` (normalized) spells them, as the callers build their paths.
  const spelled = path.resolve(dir);
  let real: string;
  try {
    real = fs.realpathSync.native(spelled);
  } catch (e) {
    // Nothing is mounted below a directory that is not there; anything else cannot be told.
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new Error(`${dir} could not be resolved (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): which paths below it are mounts cannot be told, none is entered`);
  }
  const found = mountPointsBelow(text, real);
  return real === spelled ? found : found.map((m) => spelled + m.slice(real.length));
}

/** mountsBelow, or the reason it could not be read. */
export function mountsOrWhy(dir: string, table?: string): { readonly mounts: string[] } | { readonly why: string } {
  try {
    return { mounts: mountsBelow(dir, table) };
  } catch (e) {
    return { why: (e as Error).message };
  }
}

/**
 * Pure: the mount points strictly below `dir` in a mountinfo text (deepest first). One pass over the text, a line's
 * fifth field compared as the kernel wrote it: escaping is a character at a time and each escape begins with a
 * backslash, which the kernel escapes too, so a mount point lies below `dir` exactly when its escaped form begins with
 * `dir`'s escaped form and a slash; only those are cut out and unescaped. The four fields before it (mount id, parent
 * id, major:minor, root: escaped as the mount point is) hold no space.
 */
export function mountPointsBelow(text: string, dir: string): string[] {
  const want = `${escape(dir)}/`;
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl;
    let sp = at - 1;
    for (let i = 0; i < 4 && sp < end; i++) {
      sp = text.indexOf(' ', sp + 1);
      if (sp < 0) sp = end;
    }
    if (sp < end && text.startsWith(want, sp + 1)) {
      const next = text.indexOf(' ', sp + 1);
      const mp = text.slice(sp + 1, next < 0 || next > end ? end : next);
      out.push(mp.includes('\\') ? unescape(mp) : mp);
    }
    at = end + 1;
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

/** Passes over the mount table: a mount moved, or one stacked under another, is found on a later one. */
const PASSES = 4;
/** Bytes of mount point paths one umount is given (far below ARG_MAX: 1000 paths of 4096 bytes would pass it). */
const ARGS_BYTES = 128 * 1024;

/** `mps` in runs of at most ARGS_BYTES of path. */
function batches(mps: readonly string[]): string[][] {
  const out: string[][] = [];
  let size = ARGS_BYTES;
  for (const mp of mps) {
    if (size + mp.length + 1 > ARGS_BYTES) {
      out.push([]);
      size = 0;
    }
    out.at(-1)!.push(mp);
    size += mp.length + 1;
  }
  return out;
}

/**
 * Detaches the mounts `list()` names (umount2 MNT_DETACH: each leaves the tree at once and nothing asks its file
 * system). Only the outermost are named to umount: a path through a user's mount is looked up by their file system,
 * which may answer with a link. Before, `take(mp)` makes every directory above each mount point root's alone; one
 * it throws for is left mounted. Then the table is read again and a mount detached only if it is still listed at
 * that path: the kernel looks the path up again at umount(2), and a user who swapped a directory above it for a decoy
 * before the lock (a link where the mount was) would otherwise aim the detach at any mount on the node. A mount moved
 * so, or one stacked under another, is taken on the next pass. One umount for all of a pass's mounts (a few, for
 * thousands of long paths): a user may have as many as fusermount's mount_max (1000 by default), and a process each
 * held the Epilog for seconds before its deadline counts. Returns what could not be detached (empty: none left).
 * `seen`: what `list()` gave the caller just before (the first pass starts from it). The table is read again after
 * each step that may change what it lists: the paths taken, each pass's detaching; the last read that found nothing
 * more to detach is the answer.
 */
export async function detachMounts(list: () => readonly string[], take: (mp: string) => void, exec: Exec = new ExecaExec(), seen?: readonly string[]): Promise<string[]> {
  const left = new Map<string, string>();
  let now = seen ?? null;
  for (let pass = 0; pass < PASSES; pass++) {
    now ??= list();
    const outer = outermost(now).filter((mp) => !left.has(mp));
    if (!outer.length) break;
    now = null;
    const taken: string[] = [];
    for (const mp of outer) {
      try {
        take(mp);
        taken.push(mp);
      } catch (e) {
        left.set(mp, `${mp}: not detached, its path not taken back (${(e as Error).message})`);
      }
    }
    const listed = new Set(list());
    // Moved before the lock: found where it is now on the next pass.
    for (const run of batches(taken.filter((mp) => listed.has(mp)))) {
      // The module that runs umount loaded first: its 5 s are umount's own, not a loaded node's module loading.
      await exec.ready?.();
      const r = await exec.run(UMOUNT, ['--lazy', '--no-canonicalize', '--', ...run], { timeoutMs: 5_000 });
      if (r.exitCode === 0) continue;
      // Which of them failed: those still listed (umount goes on past one it cannot detach, and says each).
      const why = r.error ?? (r.timedOut ? 'umount timed out' : null);
      const said = r.stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '');
      const still = new Set(list());
      for (const mp of run) if (still.has(mp)) left.set(mp, `${mp}: ${why ?? said.find((l) => l.startsWith(`umount: ${mp}: `)) ?? (said.join('; ') || `umount exit ${String(r.exitCode)}`)}`);
    }
  }
  return [...left.values(), ...(now ?? list()).filter((mp) => !left.has(mp)).map((mp) => `${mp}: still mounted`)];
}
