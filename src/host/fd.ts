// Open descriptors: opened with exactly the flags and mode the caller gives (nothing added: openRegular in
// files.ts is the checked open of the gate's own files), read, written, looked at (fstat: what was opened, not
// what a name leads to now), handed to a user (fchown, fchmod: no path to race), closed. One syscall each.
import fs from 'node:fs';

export type { Stats } from 'node:fs';
export const { O_RDONLY, O_WRONLY, O_RDWR, O_APPEND, O_CREAT, O_NONBLOCK, O_NOFOLLOW, O_DIRECTORY } = fs.constants;

/** open(2) of `file` with `flags` (and `mode` when it creates; 0666 less the umask when not given). */
export const openFd = (file: string, flags: number, mode?: number): number => fs.openSync(file, flags, mode);
export const closeFd = (fd: number): void => fs.closeSync(fd);
export const fstatFd = (fd: number): fs.Stats => fs.fstatSync(fd);
/** read(2) (pread(2) at `position` when given; null: from the descriptor's offset). */
export const readFd = (fd: number, buf: Uint8Array, offset: number, length: number, position: number | null): number => fs.readSync(fd, buf, offset, length, position);
/** One write(2) of `text` (UTF-8); the bytes written. */
export const writeText = (fd: number, text: string): number => fs.writeSync(fd, text);
/** One write(2) of `buf` from `offset` to its end; the bytes written. */
export const writeBytes = (fd: number, buf: Uint8Array, offset = 0): number => fs.writeSync(fd, buf, offset);
export const fchownFd = (fd: number, uid: number, gid: number): void => fs.fchownSync(fd, uid, gid);
export const fchmodFd = (fd: number, mode: number): void => fs.fchmodSync(fd, mode);
