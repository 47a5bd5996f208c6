// A Host over a snapshot file (tar.gz or tar) read into memory: answers as FsHost would on the unpacked tree.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { AccessAnswer, Host, ReadResult, StatInfo } from '../host/host.js';
import { SnapTree, type SnapNode } from './tree.js';

export const MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024;
/** Linux's MAXSYMLINKS (include/linux/namei.h): more links than this in one lookup is ELOOP. */
const MAX_LINKS = 40;

export class SnapshotError extends Error {
  override readonly name = 'SnapshotError';
}

type Resolved = { ok: true; path: string; node: SnapNode } | { ok: false; missing: boolean; reason: string };

const err = (code: string, p: string, missing: boolean): { ok: false; missing: boolean; reason: string } => ({
  ok: false,
  missing,
  reason: `${code}: ${code === 'ENOENT' ? 'no such file or directory' : code === 'ENOTDIR' ? 'not a directory' : code === 'ELOOP' ? 'too many levels of symbolic links' : code === 'EISDIR' ? 'illegal operation on a directory' : code === 'EINVAL' ? 'invalid argument' : 'permission denied'}, snapshot ${p}`,
});

export class SnapshotHost implements Host {
  /** Why each unreadable file could not be read at capture (manifest.json), so a replay gives the same reason. */
  private readonly why = new Map<string, string>();

  constructor(
    readonly root: string,
    private readonly tree: SnapTree,
  ) {
    const m = tree.get('/manifest.json');
    if (m?.kind !== 'file') return;
    try {
      const { unreadable } = JSON.parse(Buffer.from(m.data).toString('utf8')) as { unreadable?: { path: string; reason: string }[] };
      for (const u of unreadable ?? []) this.why.set(u.path, u.reason);
    } catch {
      // a manifest that does not parse only costs the original reasons
    }
  }

  /** Walks a kernel path through the archive, following links (the last one only when `followLast`). */
  private resolve(kpath: string, followLast: boolean): Resolved {
    const norm = path.posix.normalize('/' + kpath);
    // A trailing slash (POSIX path resolution) follows a final link and wants a directory.
    const slash = norm.length > 1 && norm.endsWith('/');
    const r = this.walk(norm, followLast || slash);
    return r.ok && slash && r.node.kind !== 'dir' ? err('ENOTDIR', r.path, true) : r;
  }

  private walk(norm: string, followLast: boolean): Resolved {
    const kpath = norm;
    const todo = norm.split('/').filter(Boolean);
    let cur = '/';
    let links = 0;
    while (todo.length) {
      const name = todo.shift()!;
      if (name === '.') continue;
      if (name === '..') {
        // The input was normalized lexically (as FsHost.join does), so `..` at the top comes from a link target.
        if (cur === '/') return { ok: false, missing: true, reason: `link leaves the root: ${kpath}` };
        cur = path.posix.dirname(cur);
        continue;
      }
      const dir = this.tree.get(cur);
      if (dir?.kind !== 'dir') return err('ENOTDIR', cur, true);
      const next = cur === '/' ? `/${name}` : `${cur}/${name}`;
      const n = this.tree.get(next);
      if (!n) return err('ENOENT', next, true);
      if (n.kind === 'link' && (todo.length > 0 || followLast)) {
        if (++links > MAX_LINKS) return err('ELOOP', kpath, false);
        // A target outside the archive (absolute, or `..` past its top) is never followed onto this machine.
        if (n.target.startsWith('/')) return { ok: false, missing: true, reason: `link leaves the root: ${n.target}` };
        todo.unshift(...n.target.split('/').filter(Boolean));
        continue;
      }
      cur = next;
    }
    return { ok: true, path: cur, node: this.tree.get(cur)! };
  }

  async list(p: string): Promise<ReadResult<string[]>> {
    const r = this.resolve(p, true);
    if (!r.ok) return r;
    if (r.node.kind !== 'dir') return err('ENOTDIR', r.path, true);
    return { ok: true, value: this.tree.children(r.path) };
  }

  async readBytes(p: string, max = 1 << 20): Promise<ReadResult<Uint8Array>> {
    const r = this.resolve(p, true);
    if (!r.ok) return r;
    if (r.node.kind === 'dir') return err('EISDIR', r.path, false);
    if (r.node.kind !== 'file') return err('ENOENT', r.path, true);
    // A file stored without read permission is one the capture could not read (see collect.ts).
    if ((r.node.mode & 0o444) === 0) {
      const why = this.why.get(path.posix.normalize('/' + p)) ?? this.why.get(r.path);
      return why ? { ok: false, missing: false, reason: why } : err('EACCES', r.path, false);
    }
    return { ok: true, value: r.node.data.subarray(0, max) };
  }

  async readText(p: string): Promise<ReadResult<string>> {
    const r = await this.readBytes(p);
    return r.ok ? { ok: true, value: Buffer.from(r.value).toString('utf8') } : r;
  }

  async readLink(p: string): Promise<ReadResult<string>> {
    const r = this.resolve(p, false);
    if (!r.ok) return r;
    return r.node.kind === 'link' ? { ok: true, value: r.node.target } : err('EINVAL', r.path, false);
  }

  async realPath(p: string): Promise<ReadResult<string>> {
    const r = this.resolve(p, true);
    return r.ok ? { ok: true, value: r.path } : r;
  }

  private info(n: SnapNode): StatInfo {
    if (n.kind === 'dir') return { kind: 'dir', mode: n.mode, uid: 0, size: 0, rdev: 0 };
    if (n.kind === 'file') return { kind: 'file', mode: n.mode, uid: 0, size: n.data.length, rdev: 0 };
    return { kind: 'link', mode: 0o777, uid: 0, size: Buffer.byteLength(n.target), rdev: 0 };
  }

  async lstat(p: string): Promise<ReadResult<StatInfo>> {
    const r = this.resolve(p, false);
    return r.ok ? { ok: true, value: this.info(r.node) } : r;
  }

  async stat(p: string): Promise<ReadResult<StatInfo>> {
    const r = this.resolve(p, true);
    return r.ok ? { ok: true, value: this.info(r.node) } : r;
  }

  /** A snapshot holds modes, not this process's rights on the node it was taken on. */
  async access(): Promise<AccessAnswer> {
    return { access: 'unknown', why: 'a snapshot cannot answer access(2)' };
  }
}

/** Decompresses when gzip (magic 1f 8b), else reads a plain tar. Caps both the file and what it inflates to. */
export function parseSnapshot(root: string, buf: Uint8Array): SnapshotHost {
  let tar = buf;
  if (buf[0] === 0x1f && buf[1] === 0x8b) {
    try {
      tar = gunzipSync(buf, { maxOutputLength: MAX_SNAPSHOT_BYTES });
    } catch (e) {
      throw new SnapshotError(`${root}: not a readable gzip stream: ${(e as Error).message}`, { cause: e });
    }
  }
  try {
    return new SnapshotHost(root, SnapTree.fromTar(tar));
  } catch (e) {
    throw new SnapshotError(`${root}: not a snapshot archive: ${(e as Error).message}`, { cause: e });
  }
}

export async function openSnapshot(file: string): Promise<SnapshotHost> {
  const st = await fsp.stat(file);
  if (!st.isFile()) throw new SnapshotError(`${file}: not a regular file`);
  if (st.size > MAX_SNAPSHOT_BYTES) throw new SnapshotError(`${file}: ${st.size} bytes, more than the ${MAX_SNAPSHOT_BYTES}-byte cap`);
  return parseSnapshot(file, await fsp.readFile(file));
}
