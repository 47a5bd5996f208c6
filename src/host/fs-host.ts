// Host over a directory tree: a live node ('/') or an unpacked capture.
import fs, { type Stats } from 'node:fs';
import path from 'node:path';
import type { Host, ReadResult, StatInfo } from './host.js';

function fail<T>(err: unknown): ReadResult<T> {
  const e = err as NodeJS.ErrnoException;
  const code = e.code ?? 'EUNKNOWN';
  return { ok: false, missing: code === 'ENOENT' || code === 'ENOTDIR', reason: `${code}: ${e.message}` };
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

const READ_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK;

/** `//`, a `.` or `..` component, or a trailing `/`: what path.posix.normalize would change. */
const UNCLEAN = /\/\/|\/\.\.?(\/|$)|.\/$/;

const SYSFS_MAGIC = 0x62656572;

/** Symbolic links followed in one resolution before giving up, as the kernel's path walk does (ELOOP). */
const MAX_LINKS = 40;

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

function errno(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

/** One buffer for every read of a run: attribute files are small, and a read must not allocate per file. */
let scratch = Buffer.allocUnsafe(1 << 16);

function sync<T>(fn: () => T): Promise<ReadResult<T>> {
  try {
    return Promise.resolve({ ok: true, value: fn() });
  } catch (e) {
    return Promise.resolve(fail(e));
  }
}

export class FsHost implements Host {
  readonly root: string;
  private readonly base: string;
  /** Machine path whose parent is resolved → its link text, or null when it is not a link (realPath's walk). */
  private readonly links = new Map<string, string | null>();
  /**
   * Only where this root's /sys is sysfs (a live node; statfs(2) f_type SYSFS_MAGIC, include/uapi/linux/magic.h):
   * there a `config` read costs a device access per dword. A capture's files are regular files, cheapest read
   * whole, so there is none and callers read the whole file (Host.readParts).
   */
  readonly readParts?: <T>(p: string, pick: (at: (offset: number, length: number) => Uint8Array) => T) => Promise<ReadResult<T>>;

  constructor(root: string) {
    this.root = root;
    this.base = path.resolve(root);
    if (isSysfs(this.join('/sys'))) this.readParts = (p, pick) => sync(() => this.preadParts(p, pick));
  }

  /** Kernel path → path on this machine. Kernel paths are absolute; `..` cannot climb above the root. */
  join(kpath: string): string {
    return this.machine(clean(kpath));
  }

  /** A kernel path already clean → path on this machine. */
  private machine(norm: string): string {
    return this.base === '/' ? norm : this.base + norm;
  }

  /** Path on this machine → kernel path, or undefined when it lies outside the root. */
  private unjoin(real: string): string | undefined {
    if (this.base === '/') return real;
    if (real === this.base) return '/';
    return real.startsWith(this.base + '/') ? real.slice(this.base.length) : undefined;
  }

  list(p: string): Promise<ReadResult<string[]>> {
    return sync(() => fs.readdirSync(this.join(p)).sort());
  }

  async readText(p: string): Promise<ReadResult<string>> {
    const r = await this.readBytes(p);
    return r.ok ? { ok: true, value: Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength).toString('utf8') } : r;
  }

  /**
   * Synchronous reads: a sysfs attribute is served from kernel memory, and a thread-pool round trip per
   * file cost the prolog a third of its time. O_NONBLOCK: a FIFO or device node where an attribute should
   * be reads as empty instead of blocking. (A read stuck inside the kernel would block either way: libuv
   * joins its threads at exit, so async reads could not let the process exit earlier.)
   */
  readBytes(p: string, max = 1 << 20): Promise<ReadResult<Uint8Array>> {
    return sync(() => {
      const len = this.readInto(p, max); // first: a long file replaces `scratch`
      return Uint8Array.prototype.slice.call(scratch, 0, len);
    });
  }

  /** One open, a pread per part `pick` asks for, one close. */
  private preadParts<T>(p: string, pick: (at: (offset: number, length: number) => Uint8Array) => T): T {
    const fd = fs.openSync(this.join(p), READ_FLAGS);
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
   * Reads up to `max` bytes of `p` into `scratch` and returns how many: open, read until end of file (or
   * `max`), close; no fstat (a sysfs attribute's size says nothing) and no buffer per file. A read that
   * returns less than it asked for is the end of a sysfs attribute (kernfs hands over the whole buffer it
   * formatted), of a binary attribute such as `config`, and of a regular file: the read of 0 that would
   * confirm it is skipped, one syscall fewer per file. /proc files are read until 0: a seq_file read may stop
   * short at a record that does not fit.
   */
  private readInto(p: string, max: number): number {
    const k = clean(p);
    const fd = fs.openSync(this.machine(k), READ_FLAGS);
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
    return sync(() => fs.readlinkSync(this.join(p)));
  }

  async realPath(p: string): Promise<ReadResult<string>> {
    const r = await sync(() => this.resolve(this.join(p)));
    if (!r.ok) return r;
    const k = this.unjoin(r.value);
    // A capture whose link points outside its root must not be followed onto this machine's files.
    return k !== undefined ? { ok: true, value: k } : { ok: false, missing: true, reason: `link leaves the root: ${r.value}` };
  }

  /**
   * realpath(3) with the answer for each component kept for the Host's life: the inventory resolves ~60
   * device links that share their first dozen components, so each component costs one readlink per run
   * instead of one per device (900 syscalls fewer on an 8-GPU node).
   */
  private resolve(machinePath: string): string {
    const todo = machinePath.split('/').filter((c) => c !== '' && c !== '.');
    let cur = '';
    let followed = 0;
    while (todo.length > 0) {
      const name = todo.shift()!;
      if (name === '..') {
        cur = cur.slice(0, cur.lastIndexOf('/'));
        continue;
      }
      const next = `${cur}/${name}`;
      let link = this.links.get(next);
      if (link === undefined) {
        try {
          link = fs.readlinkSync(next);
        } catch (e) {
          const err = e as NodeJS.ErrnoException;
          // ENOENT, ENOTDIR, EACCES: worded as realpath(3) would have been.
          if (err.code !== 'EINVAL') throw errno(err.code ?? 'EIO', `${err.message.replace(/^\w+: /, '').split(',')[0]}, realpath '${machinePath}'`);
          link = null; // exists and is not a link
        }
        this.links.set(next, link);
      }
      if (link === null) {
        cur = next;
        continue;
      }
      if (++followed > MAX_LINKS) throw errno('ELOOP', `too many symbolic links encountered, realpath '${machinePath}'`);
      todo.unshift(...link.split('/').filter((c) => c !== '' && c !== '.'));
      if (link.startsWith('/')) cur = '';
    }
    return cur === '' ? '/' : cur;
  }

  lstat(p: string): Promise<ReadResult<StatInfo>> {
    return sync(() => toStatInfo(fs.lstatSync(this.join(p))));
  }

  stat(p: string): Promise<ReadResult<StatInfo>> {
    return sync(() => toStatInfo(fs.statSync(this.join(p))));
  }
}
