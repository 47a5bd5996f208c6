// The in-memory file tree of a snapshot, keyed by kernel path: what the collector fills and the snapshot Host answers from.
import path from 'node:path';
import { MAX_DEPTH, MAX_ENTRIES, MAX_NAME_BYTES, MAX_PATH_BYTES } from './limits.js';
import { scanTar, TarError, writeTar, type TarEntry } from './tar.js';

export type SnapNode =
  | { readonly kind: 'dir'; readonly mode: number }
  | { readonly kind: 'file'; readonly mode: number; readonly data: Uint8Array }
  | { readonly kind: 'link'; readonly target: string };

export const DIR_MODE = 0o755;

/** A node that cannot go where it is put (a file where a directory is, a path that is not normal). */
export class TreeError extends Error {
  override readonly name = 'TreeError';
}


/** Why an archive path or link target is beyond the snapshot's limits, or null when it is within them. */
function overLimits(what: string, p: string): string | null {
  // One pass over the characters: depth and the longest component, no array per path (a fleet reads millions).
  let depth = 1;
  let longest = 0;
  let start = 0;
  for (let i = 0; i < p.length; i++)
    if (p.charCodeAt(i) === 0x2f) {
      depth++;
      longest = Math.max(longest, i - start);
      start = i + 1;
    }
  longest = Math.max(longest, p.length - start);
  const bytes = p.length * 3 <= MAX_PATH_BYTES ? p.length : Buffer.byteLength(p, 'utf8');
  if (bytes > MAX_PATH_BYTES) return `${what} of ${bytes} bytes (more than ${MAX_PATH_BYTES})`;
  if (depth > MAX_DEPTH) return `${what} of ${depth} components (more than ${MAX_DEPTH})`;
  // A component of n characters is at most 3n bytes (UTF-16 units to UTF-8): only a long one is measured.
  if (longest * 3 <= MAX_NAME_BYTES) return null;
  const long = p.split('/').find((c) => Buffer.byteLength(c, 'utf8') > MAX_NAME_BYTES);
  return long !== undefined ? `${what} with a ${Buffer.byteLength(long, 'utf8')}-byte component (more than ${MAX_NAME_BYTES})` : null;
}

/** An empty, `.` or `..` component (a leading, trailing or doubled slash included). */
const UNSAFE = /(?:^|\/)(?:\.{1,2})?(?:\/|$)/;

export class SnapTree {
  private readonly nodes = new Map<string, SnapNode>([['/', { kind: 'dir', mode: DIR_MODE }]]);
  /** Each directory's entry names, each once (a node replaced keeps its name's place): an array, cheaper than a Set. */
  private readonly kids = new Map<string, string[]>([['/', []]]);

  get(p: string): SnapNode | undefined {
    return this.nodes.get(p);
  }

  /** Entry names of a directory, sorted as readdir(3) + sort() would give them. */
  children(p: string): string[] {
    return (this.kids.get(p) ?? []).slice().sort();
  }

  get size(): number {
    return this.nodes.size;
  }

  /**
   * Adds a node at an absolute path, creating missing parents as directories (a loop, not recursion: a path's
   * depth is the archive's to choose). An existing directory is kept (a second `list` of it must not wipe its
   * entries); a longer file replaces a shorter one (config read twice).
   */
  put(p: string, node: SnapNode): void {
    if (!p.startsWith('/') || p !== path.posix.normalize(p) || p === '/') throw new TreeError(`not a normal absolute path: ${p}`);
    this.putNormal(p, node);
  }

  /** The directory the last put went into, and its names: an archive lists a directory's entries together. */
  private lastDir = '';
  private lastKids: string[] | null = null;

  /** put() of a path already known to be normal and absolute (fromTar checked each component). */
  private putNormal(p: string, node: SnapNode): void {
    const slash = p.lastIndexOf('/');
    let kids: string[];
    // The same directory as the last put (compared in place, no slice): a directory stays one once it is.
    if (this.lastKids !== null && slash === (this.lastDir.length === 1 ? 0 : this.lastDir.length) && p.startsWith(this.lastDir)) kids = this.lastKids;
    else {
      const parent = slash === 0 ? '/' : p.slice(0, slash);
      // The common case of an archive: the parent came before its entries.
      if (this.nodes.get(parent)?.kind !== 'dir') this.makeParents(p, parent);
      kids = this.kids.get(parent)!;
      this.lastDir = parent;
      this.lastKids = kids;
    }
    this.attach(p, kids, p.slice(slash + 1), node);
  }

  private makeParents(p: string, parent: string): void {
    let top = parent;
    while (!this.nodes.has(top)) top = path.posix.dirname(top);
    const up = this.nodes.get(top)!;
    if (up.kind !== 'dir') throw new TreeError(`${top} is a ${up.kind}, cannot hold ${p}`);
    // The missing parents, top down: `top` is the deepest one that exists.
    for (let at = top.length === 1 ? 1 : top.length + 1; top !== parent; at = top.length + 1) {
      const end = parent.indexOf('/', at);
      const dir = end < 0 ? parent : parent.slice(0, end);
      this.nodes.set(dir, { kind: 'dir', mode: DIR_MODE });
      this.kids.get(top)!.push(path.posix.basename(dir));
      this.kids.set(dir, []);
      top = dir;
    }
  }

  private attach(p: string, kids: string[], base: string, node: SnapNode): void {
    const had = this.nodes.get(p);
    if (had?.kind === 'dir' && node.kind === 'dir') return;
    if (had?.kind === 'file' && node.kind === 'file' && had.data.length >= node.data.length) return;
    if (had && had.kind !== node.kind) throw new TreeError(`${p}: already a ${had.kind}, not a ${node.kind}`);
    this.nodes.set(p, node);
    if (had) return;
    kids.push(base);
    if (node.kind === 'dir') this.kids.set(p, []);
  }

  /** Depth first, parents before children, each directory's entries sorted: the order `tar` and a reader expect. */
  *walk(from = '/'): Generator<[string, SnapNode]> {
    const join = (dir: string, name: string): string => (dir === '/' ? `/${name}` : `${dir}/${name}`);
    const stack = this.children(from).reverse().map((n) => join(from, n));
    while (stack.length > 0) {
      const p = stack.pop()!;
      const n = this.nodes.get(p)!;
      yield [p, n];
      if (n.kind === 'dir') for (const c of this.children(p).reverse()) stack.push(join(p, c));
    }
  }

  toTar(mtime: number, first: readonly TarEntry[] = []): Uint8Array {
    const entries: TarEntry[] = [...first];
    for (const [p, n] of this.walk()) {
      const rel = p.slice(1);
      if (n.kind === 'dir') entries.push({ path: rel, kind: 'dir', mode: n.mode, mtime });
      else if (n.kind === 'file') entries.push({ path: rel, kind: 'file', mode: n.mode, mtime, data: n.data });
      else entries.push({ path: rel, kind: 'link', mode: 0o777, mtime, target: n.target });
    }
    return writeTar(entries);
  }

  /**
   * Builds a tree from archive entries; hard links become copies of their target, device nodes are left out.
   * Every path and link target is checked against the limits before it costs anything, and so is the number of
   * nodes (implied parents count: a deep path of distinct directories costs as much as entries).
   */
  static fromTar(buf: Uint8Array): SnapTree {
    const t = new SnapTree();
    // File data are views into the archive; a plain Uint8Array's subarray is several times cheaper than a Buffer's.
    const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    scanTar(buf, MAX_ENTRIES, (e) => {
      const bad = overLimits('a path', e.path) ?? (e.kind === 'link' ? overLimits('a link target', e.target) : null);
      if (bad) throw new TarError(`${bad} in archive: ${e.path.slice(0, 200)}${e.path.length > 200 ? '…' : ''}`);
      if (UNSAFE.test(e.path)) throw new TarError(`unsafe path in archive: ${e.path}`);
      const p = `/${e.path}`;
      // Two entries for one file: tar keeps the last, a reader that kept either would replay a node the other does not.
      if (e.kind !== 'dir' && t.get(p) !== undefined) throw new TarError(`${e.path}: more than one entry in the archive`);
      if (e.kind === 'dir') t.putNormal(p, { kind: 'dir', mode: e.mode });
      else if (e.kind === 'file') t.putNormal(p, { kind: 'file', mode: e.mode, data: bytes.subarray(e.start, e.end) });
      else if (e.kind === 'link') t.putNormal(p, { kind: 'link', target: e.target });
      else if (e.kind === 'hardlink') {
        const src = t.get(`/${e.target}`);
        if (src?.kind !== 'file') throw new TarError(`hard link ${e.path} to ${e.target}: not an earlier regular file`);
        t.put(p, src);
      }
      if (t.size > MAX_ENTRIES) throw new TarError(`more than ${MAX_ENTRIES} entries (directories included)`);
    });
    return t;
  }
}
