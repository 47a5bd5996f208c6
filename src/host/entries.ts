// One name in a directory: looked at (lstat never follows it; stat does), removed, renamed, linked, its owner and
// mode changed. One syscall each, errors as the kernel gives them (ENOENT, EEXIST, …), except where said.
import fs from 'node:fs';
import { errno } from './files.js';

export type { Stats } from 'node:fs';

export const exists = (p: string): boolean => fs.existsSync(p);
export const lstat = (p: string): fs.Stats => fs.lstatSync(p);
/** lstat, undefined for ENOENT instead of a throw (ENOTDIR still throws; files.ts's lstatOrNull takes both as absent). */
export const lstatIfAny = (p: string): fs.Stats | undefined => fs.lstatSync(p, { throwIfNoEntry: false });
export const stat = (p: string): fs.Stats => fs.statSync(p);
/** stat with 64-bit fields (mtimeNs): a rewrite within the same millisecond still differs. */
export const statBig = (p: string): fs.BigIntStats => fs.statSync(p, { bigint: true });
/** realpath(3): every link on the path resolved, in one call. */
export const realPath = (p: string): string => fs.realpathSync.native(p);
export const unlink = (p: string): void => fs.unlinkSync(p);
/** Removes a file (a link itself, never what it leads to); nothing there is no error. */
export const removeFile = (p: string): void => fs.rmSync(p, { force: true });
/** rename(2): replaces what is at `to` at once (a link there is replaced, never written through). */
export const rename = (from: string, to: string): void => fs.renameSync(from, to);
/** link(2): never replaces (EEXIST), never follows `from`. */
export const link = (from: string, to: string): void => fs.linkSync(from, to);
export const readLink = (p: string): string => fs.readlinkSync(p);
/** Why this process may not execute `p` (access(2) X_OK: no x bit for root either), or null. */
export function notExecutable(p: string): string | null {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return null;
  } catch (e) {
    return `${p}: not executable (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}
export const chmod = (p: string, mode: number): void => fs.chmodSync(p, mode);
export const chown = (p: string, uid: number, gid: number): void => fs.chownSync(p, uid, gid);

/**
 * Moves src to dst but never replaces dst (link + unlink: Node has no RENAME_NOREPLACE), so two moves that
 * overlap cannot overwrite each other's file. Same inode at both names = a move cut short: finished.
 */
export function moveNoClobber(src: string, dst: string): 'moved' | 'missing' | 'exists' {
  try {
    fs.linkSync(src, dst);
  } catch (e) {
    if (errno(e) === 'ENOENT') return 'missing';
    if (errno(e) !== 'EEXIST') throw e;
    const a = fs.lstatSync(src, { throwIfNoEntry: false });
    const b = fs.lstatSync(dst, { throwIfNoEntry: false });
    if (a === undefined || b === undefined || a.ino !== b.ino || a.dev !== b.dev) return 'exists';
  }
  fs.unlinkSync(src);
  return 'moved';
}
