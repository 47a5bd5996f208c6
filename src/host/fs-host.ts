// Host over a directory tree: a live node ('/') or an unpacked capture. Reads are async so a blocked
// sysfs file never stalls the event loop and the global deadline still fires.
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

// @types/node types `flag` as a string; Node's fs takes numeric open(2) flags there too (stringToFlags).
const READ_FLAGS = (fs.constants.O_RDONLY | fs.constants.O_NONBLOCK) as unknown as string;

function call<R, T>(start: (cb: (err: NodeJS.ErrnoException | null, v: R) => void) => void, map: (v: R) => T): Promise<ReadResult<T>> {
  return new Promise((resolve) => start((err, v) => resolve(err ? fail(err) : { ok: true, value: map(v) })));
}

export class FsHost implements Host {
  readonly root: string;
  private readonly base: string;

  constructor(root: string) {
    this.root = root;
    this.base = path.resolve(root);
  }

  /** Kernel path → path on this machine. Kernel paths are absolute; `..` cannot climb above the root. */
  join(kpath: string): string {
    const norm = path.posix.normalize('/' + kpath);
    return this.base === '/' ? norm : this.base + norm;
  }

  /** Path on this machine → kernel path, or undefined when it lies outside the root. */
  private unjoin(real: string): string | undefined {
    if (this.base === '/') return real;
    if (real === this.base) return '/';
    return real.startsWith(this.base + '/') ? real.slice(this.base.length) : undefined;
  }

  list(p: string): Promise<ReadResult<string[]>> {
    return call<string[], string[]>((cb) => fs.readdir(this.join(p), cb), (v) => v.sort());
  }

  async readText(p: string): Promise<ReadResult<string>> {
    const r = await this.readBytes(p);
    return r.ok ? { ok: true, value: Buffer.from(r.value).toString('utf8') } : r;
  }

  /**
   * Callback fs.readFile: one libuv request chain, far cheaper than a FileHandle per sysfs attribute.
   * O_NONBLOCK: a FIFO or device node where an attribute should be reads as empty instead of blocking a
   * libuv thread, which would also block process exit (libuv joins its threads).
   */
  readBytes(p: string, max = 1 << 20): Promise<ReadResult<Uint8Array>> {
    return call<Buffer, Uint8Array>((cb) => fs.readFile(this.join(p), { flag: READ_FLAGS }, cb), (b) => (b.length > max ? b.subarray(0, max) : b));
  }

  readLink(p: string): Promise<ReadResult<string>> {
    return call<string, string>((cb) => fs.readlink(this.join(p), cb), (v) => v);
  }

  async realPath(p: string): Promise<ReadResult<string>> {
    const r = await call<string, string>((cb) => fs.realpath.native(this.join(p), cb), (v) => v);
    if (!r.ok) return r;
    const k = this.unjoin(r.value);
    // A capture whose link points outside its root must not be followed onto this machine's files.
    return k !== undefined ? { ok: true, value: k } : { ok: false, missing: true, reason: `link leaves the root: ${r.value}` };
  }

  lstat(p: string): Promise<ReadResult<StatInfo>> {
    return call<Stats, StatInfo>((cb) => fs.lstat(this.join(p), cb), toStatInfo);
  }

  stat(p: string): Promise<ReadResult<StatInfo>> {
    return call<Stats, StatInfo>((cb) => fs.stat(this.join(p), cb), toStatInfo);
  }
}
