// Host over a directory tree: a live node ('/') or an unpacked capture, which is never read outside its root.
import fs, { type Stats } from 'node:fs';
import path from 'node:path';
import { someNames } from './dirs.js';
import { LEAVES_ROOT, Resolver } from './fs-resolve.js';
import { type AccessAnswer, cutShort, type Host, type ReadResult, type StatInfo, textMax, tooLarge } from './host.js';
import { untrustedReason } from './trust.js';

/** Thrown for an open descriptor that is not a regular file: its message is the whole reason. */
const NOT_REGULAR = 'ENOTREG';

function fail<T>(err: unknown): ReadResult<T> {
  const e = err as NodeJS.ErrnoException;
  const code = e.code ?? 'EUNKNOWN';
  if (code === LEAVES_ROOT || code === NOT_REGULAR) return { ok: false, missing: false, reason: e.message };
  // Node's messages already start with the code ("ENOENT: no such file…"): say it once.
  const reason = e.message.startsWith(`${code}:`) ? e.message : `${code}: ${e.message}`;
  // Only ENOENT is absent. ENOTDIR (a file where a directory of the path should be) is a tree that is not the
  // kernel's: unreadable, as a loop is, never "not there" (a file at /proc/driver/nvidia read as "no driver").
  return { ok: false, missing: code === 'ENOENT', reason };
}

function kindOf(s: Stats): StatInfo['kind'] {
  if (s.isSymbolicLink()) return 'link';
  if (s.isFile()) return 'file';
  if (s.isDirectory()) return 'dir';
  if (s.isCharacterDevice()) return 'char';
  if (s.isBlockDevice()) return 'block';
  if (s.isFIFO()) return 'fifo';
  if (s.isSocket()) return 'socket';
  return 'other';
}

export function toStatInfo(s: Stats): StatInfo {
  return { kind: kindOf(s), mode: s.mode & 0o7777, uid: s.uid, size: s.size, rdev: s.rdev };
}

/** O_NONBLOCK: a FIFO or device node where an attribute should be opens at once instead of waiting for a writer. */
const READ_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK;
/** In a capture every link on the path is resolved first, so the name opened must not be one (a swap is refused). */
const CONFINED_FLAGS = READ_FLAGS | fs.constants.O_NOFOLLOW;
/** No read, whatever `max` a caller asks, holds more than this (the largest every caller wants: 16 MiB). */
export const MAX_READ_BYTES = 64 << 20;

/** `//`, a `.` or `..` component, or a trailing `/`: what path.posix.normalize would change. */
const UNCLEAN = /\/\/|\/\.\.?(\/|$)|.\/$/;

const SYSFS_MAGIC = 0x62656572;

/** A kernel path absolute and normalized. Most come from the inventory's own code already so: only the others are rewritten. */
function clean(kpath: string): string {
  return kpath.startsWith('/') && !UNCLEAN.test(kpath) ? kpath : path.posix.normalize('/' + kpath);
}

/** Whether `dir` is on sysfs; false when it is absent or unreadable. */
function isSysfs(dir: string): boolean {
  try {
    return fs.statfsSync(dir).type === SYSFS_MAGIC;
  } catch {
    return false;
  }
}

/** One buffer for every read of a run: attribute files are small, and a read must not allocate per file. */
let scratch = Buffer.allocUnsafe(1 << 16);

/**
 * Runs one synchronous read. An error thrown inside becomes a ReadResult whose reason is its message only, so no
 * stack is captured for it: an absent attribute, and in a capture each resolved component that is not a link
 * (readlink's EINVAL), cost an Error each, and its stack trace was most of that cost.
 */
function sync<T>(fn: () => T): Promise<ReadResult<T>> {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return Promise.resolve({ ok: true, value: fn() });
  } catch (e) {
    return Promise.resolve(fail(e));
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export class FsHost implements Host {
  readonly root: string;
  private readonly base: string;
  /** Every root but '/': a capture, whose links must all resolve inside it. */
  private readonly confined: boolean;
  private readonly resolver: Resolver;
  /**
   * Only where this root's /sys is sysfs (a live node; statfs(2) f_type SYSFS_MAGIC, include/uapi/linux/magic.h):
   * there a `config` read costs a device access per dword. A capture's files are regular files, cheapest read
   * whole, so there is none and callers read the whole file (Host.readParts).
   */
  readonly readParts?: <T>(p: string, pick: (at: (offset: number, length: number) => Uint8Array) => T) => Promise<ReadResult<T>>;

  constructor(root: string) {
    this.root = root;
    this.base = path.resolve(root);
    this.confined = this.base !== '/';
    this.resolver = new Resolver((k) => this.machine(k), this.confined);
    if (isSysfs(this.machine('/sys'))) this.readParts = (p, pick) => sync(() => this.preadParts(p, pick));
  }

  /** A kernel path already clean → path on this machine. */
  private machine(norm: string): string {
    return this.base === '/' ? norm : this.base + norm;
  }

  /**
   * Kernel path → the machine path to act on. On '/' the path itself (the kernel follows links: they are this
   * machine's). In a capture every link is resolved here, inside the root; `followLast` false leaves the last
   * component as it is (lstat, readlink).
   */
  private locate(kpath: string, followLast: boolean): string {
    return this.place(clean(kpath), followLast);
  }

  /** locate() of a path clean already. */
  private place(k: string, followLast: boolean): string {
    if (!this.confined) return this.machine(k);
    if (followLast || k === '/') return this.machine(this.resolver.resolve(k));
    const cut = k.lastIndexOf('/');
    const dir = this.resolver.resolve(k.slice(0, cut) || '/');
    return this.machine(dir === '/' ? k.slice(cut) : dir + k.slice(cut));
  }

  list(p: string): Promise<ReadResult<string[]>> {
    return sync(() => fs.readdirSync(this.locate(p, true)).sort());
  }

  listSome(p: string, max: number): Promise<ReadResult<string[]>> {
    return sync(() => someNames(this.locate(p, true), max));
  }

  /** As readBytes(p) decoded, without the copy: the text is decoded from `scratch` itself; whole, or not at all. */
  readText(p: string): Promise<ReadResult<string>> {
    return sync(() => {
      const k = clean(p);
      const len = this.readInto(k, textMax(k) + 1); // first: a long file replaces `scratch`
      if (len > textMax(k)) throw Object.assign(new Error(tooLarge(p)), { code: NOT_REGULAR });
      const cut = cutShort(p, len ? scratch[len - 1] : undefined);
      if (cut) throw Object.assign(new Error(cut), { code: NOT_REGULAR });
      return scratch.toString('utf8', 0, len);
    });
  }

  /**
   * Synchronous reads: a sysfs attribute is served from kernel memory, and a thread-pool round trip per
   * file cost the prolog a third of its time. (A read stuck inside the kernel would block either way: libuv
   * joins its threads at exit, so async reads could not let the process exit earlier.)
   */
  readBytes(p: string, max = 1 << 20): Promise<ReadResult<Uint8Array>> {
    return sync(() => {
      const len = this.readInto(clean(p), Math.min(max, MAX_READ_BYTES)); // first: a long file replaces `scratch`
      return Uint8Array.prototype.slice.call(scratch, 0, len);
    });
  }

  /**
   * Opens a file to read (`k` a clean kernel path), and only a regular file: sysfs attributes (kernfs), /proc files and a capture's files
   * all are. A FIFO, socket or device node opens at once (O_NONBLOCK) and is refused on its fstat, never read.
   * In a capture the directories are resolved inside the root and the name is opened O_NOFOLLOW; only when it
   * is itself a link (ELOOP) is the whole path resolved, so a plain file costs no readlink of its own.
   */
  private open(k: string): number {
    let fd: number;
    if (!this.confined) fd = fs.openSync(this.machine(k), READ_FLAGS);
    else {
      try {
        fd = fs.openSync(this.place(k, false), CONFINED_FLAGS);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ELOOP') throw e;
        fd = fs.openSync(this.place(k, true), CONFINED_FLAGS);
      }
    }
    try {
      const st = fs.fstatSync(fd);
      // A directory keeps read(2)'s own answer, as before this check.
      if (st.isDirectory()) throw Object.assign(new Error('illegal operation on a directory, read'), { code: 'EISDIR' });
      if (!st.isFile()) throw Object.assign(new Error(`not a regular file (${kindOf(st)})`), { code: NOT_REGULAR });
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
    return fd;
  }

  /** One open, a pread per part `pick` asks for, one close. */
  private preadParts<T>(p: string, pick: (at: (offset: number, length: number) => Uint8Array) => T): T {
    const fd = this.open(clean(p));
    try {
      return pick((offset, length) => {
        const b = Buffer.allocUnsafe(length);
        return b.subarray(0, fs.readSync(fd, b, 0, length, offset));
      });
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Reads up to `max` bytes of the clean kernel path `k` into `scratch` and returns how many: open, fstat (the kind only: a sysfs
   * attribute's size says nothing), read until end of file (or `max`), close; no buffer per file. A read that
   * returns less than it asked for is the end of a sysfs attribute (kernfs hands over the whole buffer it
   * formatted), of a binary attribute such as `config`, and of a regular file: the read of 0 that would
   * confirm it is skipped, one syscall fewer per file. /proc files are read until 0: a seq_file read may stop
   * short at a record that does not fit.
   */
  private readInto(k: string, max: number): number {
    const fd = this.open(k);
    const shortIsEnd = !k.startsWith('/proc/');
    try {
      let len = 0;
      for (;;) {
        if (len === scratch.length) {
          const bigger = Buffer.allocUnsafe(scratch.length * 2);
          scratch.copy(bigger, 0, 0, len);
          scratch = bigger;
        }
        const want = Math.min(scratch.length, max) - len;
        const n = fs.readSync(fd, scratch, len, want, null);
        len += n;
        if (n === 0 || len >= max || (shortIsEnd && n < want)) return len;
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  readLink(p: string): Promise<ReadResult<string>> {
    return sync(() => fs.readlinkSync(this.locate(p, false)));
  }

  realPath(p: string): Promise<ReadResult<string>> {
    return sync(() => this.resolver.resolve(clean(p)));
  }

  lstat(p: string): Promise<ReadResult<StatInfo>> {
    return sync(() => toStatInfo(fs.lstatSync(this.locate(p, false))));
  }

  /** In a capture the path is resolved already: lstat, so that a link swapped in since is not followed. */
  stat(p: string): Promise<ReadResult<StatInfo>> {
    return sync(() => toStatInfo(this.confined ? fs.lstatSync(this.locate(p, true)) : fs.statSync(this.locate(p, true))));
  }

  access(p: string): Promise<AccessAnswer> {
    let answer: AccessAnswer;
    try {
      fs.accessSync(this.locate(p, true), fs.constants.R_OK | fs.constants.W_OK);
      answer = { access: 'rw' };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const denied = code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
      answer = { access: denied ? 'denied' : 'unknown', why: code === LEAVES_ROOT ? (e as Error).message : (code ?? (e as Error).message) };
    }
    return Promise.resolve(answer);
  }

  /** On the live node only (a capture's owners are whoever unpacked it). */
  untrusted(p: string): string | null {
    return this.confined ? null : untrustedReason(clean(p), process.getuid?.() ?? 0, { absent: true });
  }
}
