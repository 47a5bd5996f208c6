// A Host over a snapshot file (tar.gz or tar) read into memory: answers as FsHost would on the unpacked tree, but a path
// the tree lacks is absent only where the recording found it absent (manifest `missing`); else it is unknown.
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ConfigError } from '../errors.js';
import { type AccessAnswer, type Host, type ReadResult, type StatInfo, textMax, wholeText } from '../host/host.js';
import { readRegularCapped } from '../host/whole-file.js';
import { MAX_FILE_BYTES, MAX_LINKS, MAX_PATH_BYTES, MAX_TAR_BYTES } from './limits.js';
import { manifestFields, manifestProblem } from './manifest.js';
import { TarError } from './tar.js';
import { SnapTree, TreeError, type SnapNode } from './tree.js';

/** A file that is not a snapshot this gdrgate can replay: a usage error (exit 2), like a bad baseline. */
export class SnapshotError extends ConfigError {}

type Resolved = { ok: true; path: string; node: SnapNode } | { ok: false; missing: boolean; reason: string };

const err = (code: string, p: string, missing: boolean): { ok: false; missing: boolean; reason: string } => ({
  ok: false,
  missing,
  reason: `${code}: ${code === 'ENOENT' ? 'no such file or directory' : code === 'ENOTDIR' ? 'not a directory' : code === 'ELOOP' ? 'too many levels of symbolic links' : code === 'ENAMETOOLONG' ? 'file name too long' : code === 'EISDIR' ? 'illegal operation on a directory' : code === 'EINVAL' ? 'invalid argument' : 'permission denied'}, snapshot ${p}`,
});

/** path.posix.normalize('/' + p), without its cost where p is normal already (absolute, no `//` or `/.`, no trailing `/`). */
function normalPath(p: string): string {
  if (p.length > 1 && p.charCodeAt(0) === 0x2f && !p.endsWith('/') && !p.includes('//') && !p.includes('/.')) return p;
  return path.posix.normalize('/' + p);
}

export class SnapshotHost implements Host {
  /** Why each unreadable file could not be read at capture (manifest.json), so a replay gives the same reason. */
  private readonly why = new Map<string, string>();
  /** The manifest's `missing` list: the paths the recording Host was asked for and found absent. */
  private readonly recordedMissing: readonly string[] = [];
  /**
   * The manifest's `listed`: directories whose listing was recorded. A listing of any other directory is unknown
   * (the tree holds only the entries something read), and an entry absent from a listed directory is absent. null:
   * a snapshot from before the field, whose listings are taken as they are.
   */
  private readonly listed: ReadonlySet<string> | null = null;
  /** Which gdrgate took the snapshot (named where the snapshot cannot answer) and when (ms; null: unknown): manifest.json. */
  private readonly takenBy: string = 'unknown';
  readonly takenAt: number | null = null;

  constructor(
    readonly root: string,
    private readonly tree: SnapTree,
  ) {
    const m = tree.get('/manifest.json');
    // A manifest that does not parse only costs the original reasons (and every absence becomes unknown); one
    // malformed field costs that field, never the time (fleet report's --max-age) or the others.
    const f = m?.kind === 'file' ? manifestFields(m.data) : null;
    if (f === null) return;
    this.takenAt = f.time;
    if (f.version !== null) this.takenBy = f.version;
    for (const [p, why] of f.unreadable) this.why.set(p, why);
    this.recordedMissing = f.missing;
    if (f.listed !== null) this.listed = new Set(f.listed.map(normalPath));
  }

  /**
   * Where the tree stops on each path the manifest records as missing: the component of the snapshot's tree
   * (links followed) that was absent on the node. Built once, on the first path the tree lacks: a Set, O(1) a
   * lookup after that. `null` while it is being built.
   */
  private absentAt: Set<string> | null | undefined;
  /** The component the last ENOENT of a walk stopped at (read while absentAt is built). */
  private lastMiss: string | null = null;

  private vouchedAbsent(): Set<string> | null {
    if (this.absentAt !== undefined) return this.absentAt;
    this.absentAt = null;
    const at = new Set<string>();
    for (const m of this.recordedMissing) {
      this.lastMiss = null;
      const r = this.walk(normalPath(m), true);
      if (!r.ok && this.lastMiss !== null) at.add(this.lastMiss);
    }
    this.absentAt = at;
    return at;
  }

  /**
   * `next` is not in the tree (its directory is). The snapshot vouches that it was absent on the node only when
   * the recording found it absent (manifest `missing`: the path or an ancestor); otherwise it never asked for it
   * (a gdrgate that reads more than the one that took the snapshot) and the answer is unknown, never ENOENT.
   */
  private noEntry(next: string): Resolved {
    this.lastMiss = next;
    // A directory whose listing was recorded vouches for what it did not hold.
    if (this.listed !== null && this.listed.has(next.slice(0, next.lastIndexOf('/')) || '/')) return err('ENOENT', next, true);
    const at = this.vouchedAbsent();
    if (at === null || at.has(next)) return err('ENOENT', next, true);
    return { ok: false, missing: false, reason: `not recorded by this snapshot (taken by gdrgate ${this.takenBy}): ${next}` };
  }

  /** Walks a kernel path through the archive, following links (the last one only when `followLast`). */
  private resolve(kpath: string, followLast: boolean): Resolved {
    const norm = normalPath(kpath);
    // A trailing slash (POSIX path resolution) follows a final link and wants a directory.
    const slash = norm.length > 1 && norm.endsWith('/');
    const r = this.walk(norm, followLast || slash);
    return r.ok && slash && r.node.kind !== 'dir' ? err('ENOTDIR', r.path, false) : r;
  }

  /** The walk's answer, from the tree's keys where they give it, else by walkAll. */
  private walk(norm: string, followLast: boolean): Resolved {
    if (norm.length > MAX_PATH_BYTES) return err('ENAMETOOLONG', norm.slice(0, 200), false);
    // The path as a key of the tree: every component above a key is a directory of the tree (SnapTree never puts
    // a node under a file or a link), so a hit that is not a link to follow is what the walk would reach.
    const hit = this.tree.get(norm);
    if (hit && (hit.kind !== 'link' || !followLast)) return { ok: true, path: norm, node: hit };
    // Else its directory, resolved once per host (sysfs paths go through the same few links again and again), and
    // the last component in it: what the walk reaches when that component is not a link to follow.
    const slash = norm.lastIndexOf('/');
    if (slash > 0 && slash < norm.length - 1) {
      const real = this.dir(norm.slice(0, slash));
      if (real !== null) {
        const base = norm.slice(slash + 1);
        const next = real === '/' ? `/${base}` : `${real}/${base}`;
        const n = this.tree.get(next);
        if (n && (n.kind !== 'link' || !followLast)) return { ok: true, path: next, node: n };
        // Absent from a directory the walk reaches: the walk's own ENOENT, at the same path.
        if (!n) return this.noEntry(next);
      }
    }
    return this.walkAll(norm, followLast, { peak: 0 });
  }

  /** Directories resolved so far (every link followed): their path in the tree; null where the walk fails. */
  private readonly dirs = new Map<string, string | null>();

  private dir(norm: string): string | null {
    let real = this.dirs.get(norm);
    if (real !== undefined) return real;
    const seen = { peak: 0 };
    const r = this.walkAll(norm, true, seen);
    // One more pending component (the one below) must keep the walk within its bound, as the whole walk would.
    real = r.ok && r.node.kind === 'dir' && seen.peak + 1 <= MAX_PATH_BYTES / 2 ? r.path : null;
    this.dirs.set(norm, real);
    return real;
  }

  /**
   * Components are kept reversed on a stack (a link's are pushed, O(1) each), and the whole lookup is bounded:
   * MAX_LINKS links (ELOOP) and a pending path of PATH_MAX/2 components (ENAMETOOLONG), as the kernel's walk is.
   * `seen.peak`: the most components pending at once.
   */
  private walkAll(norm: string, followLast: boolean, seen: { peak: number }): Resolved {
    const kpath = norm;
    const todo = norm.split('/').filter(Boolean).reverse();
    let cur = '/';
    let links = 0;
    while (todo.length) {
      const name = todo.pop()!;
      if (name === '.') continue;
      if (name === '..') {
        // The input was normalized lexically (as FsHost.join does), so `..` at the top comes from a link target.
        if (cur === '/') return { ok: false, missing: false, reason: `unreadable: leaves the root: a link target climbs above it (resolving ${kpath})` };
        cur = path.posix.dirname(cur);
        continue;
      }
      const dir = this.tree.get(cur);
      if (dir?.kind !== 'dir') return err('ENOTDIR', cur, false);
      const next = cur === '/' ? `/${name}` : `${cur}/${name}`;
      const n = this.tree.get(next);
      if (!n) return this.noEntry(next);
      if (n.kind === 'link' && (todo.length > 0 || followLast)) {
        if (++links > MAX_LINKS) return err('ELOOP', kpath, false);
        // The archive is a chroot: an absolute target starts again at its top (a live node's /var/run -> /run reads
        // the snapshot's /run); only `..` past its top (above) leaves it, and is never followed onto this machine.
        const parts = n.target.split('/').filter(Boolean);
        if (n.target.startsWith('/')) cur = '/';
        seen.peak = Math.max(seen.peak, todo.length + parts.length);
        if (todo.length + parts.length > MAX_PATH_BYTES / 2) return err('ENAMETOOLONG', kpath, false);
        for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]!);
        continue;
      }
      cur = next;
    }
    return { ok: true, path: cur, node: this.tree.get(cur)! };
  }

  async list(p: string): Promise<ReadResult<string[]>> {
    const r = this.resolve(p, true);
    if (!r.ok) return r;
    if (r.node.kind !== 'dir') return err('ENOTDIR', r.path, false);
    // The tree holds the entries something read; only a recorded listing says they are all there were.
    if (this.listed !== null && !this.listed.has(r.path)) return { ok: false, missing: false, reason: `listing not recorded by this snapshot (taken by gdrgate ${this.takenBy}): ${r.path}` };
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
    // Decoded from a Buffer view of the data (Buffer.from of a Uint8Array would copy it first).
    return wholeText(await this.readBytes(p, textMax(p) + 1), p);
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
  async access(_path: string): Promise<AccessAnswer> {
    return { access: 'unknown', why: 'a snapshot cannot answer access(2)' };
  }

  /** The node as it was: who could change its files then is not in a snapshot, and nothing read here acts as root. */
  readonly untrusted = (): null => null;
}

/** Errors of the archive itself (its format, its limits, its manifest): anything else is a bug of ours and propagates. */
const BAD_ARCHIVE = [TarError, TreeError, SnapshotError];

/** zlib's default output chunk, and the most a size hint may ask for at once. */
const CHUNK_MIN = 16 * 1024;
const CHUNK_MAX = 8 * 1024 * 1024;

/**
 * The output chunk to inflate into: the size the gzip trailer states (ISIZE, RFC 1952 §2.3.1; one chunk, no concatenation
 * copy), within [CHUNK_MIN, CHUNK_MAX]. Only a hint: a lying trailer costs more chunks; maxOutputLength caps the output.
 */
function outputHint(gz: Uint8Array): number {
  if (gz.length < 18) return CHUNK_MIN;
  const n = gz.length;
  const isize = (gz[n - 4]! | (gz[n - 3]! << 8) | (gz[n - 2]! << 16) | (gz[n - 1]! << 24)) >>> 0;
  return Math.min(CHUNK_MAX, Math.max(CHUNK_MIN, isize + 64));
}

/**
 * Decompresses when gzip (magic 1f 8b), else reads a plain tar. Caps what it inflates to (inside zlib: a gzip
 * bomb stops there), the archive's entries, depths and lengths (limits.ts), and wants a gdrgate manifest: every
 * other tar, an empty one included, is not a snapshot (it would replay as a node with nothing on it).
 */
export function parseSnapshot(root: string, buf: Uint8Array): SnapshotHost {
  let tar = buf;
  if (buf[0] === 0x1f && buf[1] === 0x8b) {
    try {
      tar = gunzipSync(buf, { maxOutputLength: MAX_TAR_BYTES, chunkSize: outputHint(buf) });
    } catch (e) {
      const big = (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
      throw new SnapshotError(`${root}: ${big ? `inflates to more than ${MAX_TAR_BYTES} bytes` : `not a readable gzip stream: ${(e as Error).message}`}`, { cause: e });
    }
  } else if (tar.length > MAX_TAR_BYTES) throw new SnapshotError(`${root}: ${tar.length} bytes of tar, more than ${MAX_TAR_BYTES}`);
  try {
    const tree = SnapTree.fromTar(tar);
    const problem = manifestProblem(tree);
    if (problem) throw new SnapshotError(problem);
    return new SnapshotHost(root, tree);
  } catch (e) {
    if (!BAD_ARCHIVE.some((c) => e instanceof c)) throw e;
    throw new SnapshotError(`${root}: not a snapshot archive: ${(e as Error).message}`, { cause: e });
  }
}

export async function openSnapshot(file: string): Promise<SnapshotHost> {
  // A file that cannot be opened keeps its errno (the caller's exit 2); what the descriptor showed is a snapshot error.
  const bytes = await readRegularCapped(file, MAX_FILE_BYTES).catch((e: NodeJS.ErrnoException) => {
    throw e.code !== undefined ? e : new SnapshotError(e.message);
  });
  return parseSnapshot(file, bytes);
}
