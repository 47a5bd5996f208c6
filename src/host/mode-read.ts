// Whether a job's user could read a file by its mode bits: the agent reads as root only what the user could read too.
import fs from 'node:fs';
import path from 'node:path';
import type { HeldDir } from './held-dir.js';

/** A process's user and groups (/proc/<pid>/status Uid, Gid and Groups), for modeAllowsRead. */
export interface Ids {
  readonly uid: number;
  readonly gids: readonly number[];
}

/** Whether the owner, group or other bits (whichever apply to `ids`) of `st` have `bit`. */
const allows = (st: fs.Stats, ids: Ids, bit: number): boolean => ((st.mode >> (st.uid === ids.uid ? 6 : ids.gids.includes(st.gid) ? 3 : 0)) & bit) !== 0;

/**
 * Whether a process with `ids` may read `file` by the mode bits of the file and of every directory above it, on the
 * path as named and as resolved: what root reads for a user (the agent) only when the user could read it too. ACLs
 * are not read: an ACL that grants more is a "no" (the user then reads it themselves), one that denies a user whom
 * the mode bits allow is not seen. Only for paths root alone can change: a job's directory is its user's (modeAllowsReadIn).
 */
export function modeAllowsRead(file: string, ids: Ids): boolean {
  try {
    const real = fs.realpathSync(file);
    const st = fs.statSync(real);
    return st.isFile() && allows(st, ids, 4) && mayEnter(path.dirname(path.resolve(file)), path.dirname(real), ids);
  } catch {
    return false;
  }
}

/** Whether `ids` may search (x) every directory from `named` and from `real` (the same one resolved) up to /. Throws as stat(2). */
function mayEnter(named: string, real: string, ids: Ids): boolean {
  for (const start of [named, real])
    for (let d = start; ; d = path.dirname(d)) {
      if (!allows(fs.statSync(d), ids, 1)) return false;
      if (d === path.dirname(d)) break;
    }
  return true;
}

/**
 * modeAllowsRead for `name` in a held directory (a job's, its user's: held-dir.ts, never entering a mount): the file
 * (a regular file, no link) and the held directory by their own lstat, and the directories above it from `above` (the
 * state directory: root's), on the path as named and as resolved.
 */
export function modeAllowsReadIn(dir: HeldDir, name: string, ids: Ids, above: string): boolean {
  try {
    const st = dir.lstat(name);
    if (st === null || st === 'mount' || !st.isFile() || !allows(st, ids, 4) || !allows(dir.stats, ids, 1)) return false;
    return mayEnter(path.resolve(above), fs.realpathSync(above), ids);
  } catch {
    return false;
  }
}
