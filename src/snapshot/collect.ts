// Copies requested paths from a Host into a SnapTree as on the node: links as links (and their targets), every directory.
import path from 'node:path';
import type { ReadResult } from '../host/host.js';
import { MAX_LINKS } from './limits.js';
import type { MemoHost, Request } from './memo.js';
import type { SnapNode, SnapTree } from './tree.js';

/** Cap for files copied because they sit in a listed directory (sysfs attributes are at most a page). */
const LISTED_MAX = 64 * 1024;

export interface Problems {
  /** Present but not readable (EACCES, EIO): stored without read permission so a replay says the same. */
  readonly unreadable: Map<string, string>;
  /** Asked for but outside the snapshot's allowlist: never stored. */
  readonly skipped: Map<string, string>;
}

/** Files keep the bytes the checks read; every directory on the way gets a directory entry of its own. */
export class Copier {
  readonly problems: Problems = { unreadable: new Map(), skipped: new Map() };
  /** Real paths of the directories whose listing was copied (manifest `listed`). */
  readonly listed = new Set<string>();

  constructor(
    private readonly host: MemoHost,
    private readonly tree: SnapTree,
    private readonly allowed: (kpath: string) => boolean,
  ) {}

  async copy(req: Request): Promise<void> {
    if (req.op === 'read') return this.file(req.path, req.max);
    if (req.op === 'list') return this.listing(req.path);
    return this.entry(req.path, req.op === 'realPath' || req.op === 'stat');
  }

  /** Resolves a kernel path component by component, storing links and directories; returns the real path or null. */
  private async walk(kpath: string, followLast: boolean, depth = 0): Promise<string | null> {
    const parts = path.posix.normalize('/' + kpath).split('/').filter(Boolean);
    let cur = '/';
    for (let i = 0; i < parts.length; i++) {
      const next = cur === '/' ? `/${parts[i]}` : `${cur}/${parts[i]}`;
      const st = await this.host.lstat(next);
      if (!st.ok) return null;
      const last = i === parts.length - 1;
      if (st.value.kind === 'link') {
        if (!this.allowed(next)) return this.skip(next);
        const t = await this.host.readLink(next);
        if (!t.ok) return null;
        if (!this.store(next, { kind: 'link', target: t.value })) return null;
        if (last && !followLast) return next;
        // An absolute target starts again at the root, the live node's or a capture's (FsHost resolves it inside).
        if (depth >= MAX_LINKS) return null;
        const real = await this.walk(t.value.startsWith('/') ? t.value : path.posix.join(cur, t.value), true, depth + 1);
        if (real === null) return null;
        cur = real;
      } else if (st.value.kind === 'dir') {
        if (!this.store(next, { kind: 'dir', mode: 0o755 })) return null;
        cur = next;
      } else {
        return last ? next : null; // a file in the middle of a path: ENOTDIR
      }
    }
    return cur;
  }

  /** A node that changed kind between two reads (a device unplugged mid-walk) is reported, never fatal. */
  private store(p: string, node: SnapNode): boolean {
    try {
      this.tree.put(p, node);
      return true;
    } catch (e) {
      this.problems.unreadable.set(p, `changed while copying: ${(e as Error).message}`);
      return false;
    }
  }

  private skip(p: string): null {
    this.problems.skipped.set(p, 'not on the snapshot allowlist');
    return null;
  }

  private put(real: string, mode: number, r: ReadResult<Uint8Array>, shown: string): void {
    if (!this.allowed(real)) {
      this.skip(real);
      return;
    }
    if (r.ok) this.store(real, { kind: 'file', mode: (mode & 0o444 ? mode : mode | 0o400) & 0o7777, data: r.value });
    else if (!r.missing && this.store(real, { kind: 'file', mode: mode & 0o7333, data: new Uint8Array(0) })) this.problems.unreadable.set(shown, r.reason);
  }

  /** A read the checks (or the extra list) made: the bytes are the memoized answer to that very request. */
  private async file(p: string, max?: number): Promise<void> {
    const real = await this.walk(p, true);
    if (real === null) return;
    const st = await this.host.lstat(real);
    if (!st.ok || st.value.kind !== 'file') return;
    this.put(real, st.value.mode, await this.host.readBytes(p, max), p);
  }

  /** A node itself (lstat/readLink/realPath/stat); a regular file comes with its content. */
  private async entry(p: string, follow: boolean, max = LISTED_MAX): Promise<void> {
    const real = await this.walk(p, follow);
    if (real === null) return;
    const st = await this.host.lstat(real);
    if (st.ok && st.value.kind === 'file') this.put(real, st.value.mode, await this.host.readBytes(real, max), real);
  }

  /** A directory listing: every entry, so the replayed list is the same; device nodes and sockets are left out. */
  private async listing(p: string): Promise<void> {
    const real = await this.walk(p, true);
    const ls = await this.host.list(p);
    if (real === null || !ls.ok) return;
    this.listed.add(real);
    await Promise.all(ls.value.map((name) => this.entry(real === '/' ? `/${name}` : `${real}/${name}`, false)));
  }
}

/** Runs `f` over items with at most `n` in flight (a live sysfs walk must not exhaust file descriptors). */
export async function pool<T>(items: readonly T[], n: number, f: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await f(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}
