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

// @types/node types `flag` as a string; Node's fs takes numeric open(2) flags there too (stringToFlags).
const READ_FLAGS = (fs.constants.O_RDONLY | fs.constants.O_NONBLOCK) as unknown as string;

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
    return sync(() => fs.readdirSync(this.join(p)).sort());
  }

  async readText(p: string): Promise<ReadResult<string>> {
    const r = await this.readBytes(p);
    return r.ok ? { ok: true, value: Buffer.from(r.value).toString('utf8') } : r;
  }

  /**
   * Synchronous reads: a sysfs attribute is served from kernel memory, and a thread-pool round trip per
   * file cost the prolog a third of its time. O_NONBLOCK: a FIFO or device node where an attribute should
   * be reads as empty instead of blocking. (A read stuck inside the kernel would block either way: libuv
   * joins its threads at exit, so async reads could not let the process exit earlier.)
   */
  readBytes(p: string, max = 1 << 20): Promise<ReadResult<Uint8Array>> {
    return sync(() => {
      const b = fs.readFileSync(this.join(p), { flag: READ_FLAGS });
      return b.length > max ? b.subarray(0, max) : b;
    });
  }

  readLink(p: string): Promise<ReadResult<string>> {
    return sync(() => fs.readlinkSync(this.join(p)));
  }

  async realPath(p: string): Promise<ReadResult<string>> {
    const r = await sync(() => fs.realpathSync.native(this.join(p)));
    if (!r.ok) return r;
    const k = this.unjoin(r.value);
    // A capture whose link points outside its root must not be followed onto this machine's files.
    return k !== undefined ? { ok: true, value: k } : { ok: false, missing: true, reason: `link leaves the root: ${r.value}` };
  }

  lstat(p: string): Promise<ReadResult<StatInfo>> {
    return sync(() => toStatInfo(fs.lstatSync(this.join(p))));
  }

  stat(p: string): Promise<ReadResult<StatInfo>> {
    return sync(() => toStatInfo(fs.statSync(this.join(p))));
  }
}
