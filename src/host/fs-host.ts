// Host over a directory tree: a live node ('/') or an unpacked capture. Reads are async so a blocked
// sysfs file never stalls the event loop and the global deadline still fires.
import { promises as fsp, type Stats } from 'node:fs';
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

  async list(p: string): Promise<ReadResult<string[]>> {
    try {
      return { ok: true, value: (await fsp.readdir(this.join(p))).sort() };
    } catch (e) {
      return fail(e);
    }
  }

  async readText(p: string): Promise<ReadResult<string>> {
    const r = await this.readBytes(p);
    return r.ok ? { ok: true, value: Buffer.from(r.value).toString('utf8') } : r;
  }

  async readBytes(p: string, max = 1 << 20): Promise<ReadResult<Uint8Array>> {
    let fh: fsp.FileHandle | undefined;
    try {
      fh = await fsp.open(this.join(p), 'r');
      // sysfs reports size 4096 for every attribute: read until EOF rather than trusting st_size.
      const chunks: Buffer[] = [];
      let total = 0;
      for (;;) {
        const buf = Buffer.allocUnsafe(Math.min(8192, max - total));
        if (buf.length === 0) break;
        const { bytesRead } = await fh.read(buf, 0, buf.length, null);
        if (bytesRead === 0) break;
        chunks.push(buf.subarray(0, bytesRead));
        total += bytesRead;
      }
      return { ok: true, value: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) };
    } catch (e) {
      return fail(e);
    } finally {
      await fh?.close().catch(() => undefined);
    }
  }

  async readLink(p: string): Promise<ReadResult<string>> {
    try {
      return { ok: true, value: await fsp.readlink(this.join(p)) };
    } catch (e) {
      return fail(e);
    }
  }

  async realPath(p: string): Promise<ReadResult<string>> {
    try {
      const real = await fsp.realpath(this.join(p));
      const k = this.unjoin(real);
      // A capture whose link points outside its root must not be followed onto this machine's files.
      return k !== undefined ? { ok: true, value: k } : { ok: false, missing: true, reason: `link leaves the root: ${real}` };
    } catch (e) {
      return fail(e);
    }
  }

  async lstat(p: string): Promise<ReadResult<StatInfo>> {
    try {
      return { ok: true, value: toStatInfo(await fsp.lstat(this.join(p))) };
    } catch (e) {
      return fail(e);
    }
  }

  async stat(p: string): Promise<ReadResult<StatInfo>> {
    try {
      return { ok: true, value: toStatInfo(await fsp.stat(this.join(p))) };
    } catch (e) {
      return fail(e);
    }
  }
}
