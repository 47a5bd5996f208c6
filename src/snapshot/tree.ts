// The in-memory file tree of a snapshot, keyed by kernel path: what the collector fills and the snapshot Host answers from.
import path from 'node:path';
import { readTar, TarError, writeTar, type TarEntry } from './tar.js';

export type SnapNode =
  | { readonly kind: 'dir'; readonly mode: number }
  | { readonly kind: 'file'; readonly mode: number; readonly data: Uint8Array }
  | { readonly kind: 'link'; readonly target: string };

export const DIR_MODE = 0o755;

export class SnapTree {
  private readonly nodes = new Map<string, SnapNode>([['/', { kind: 'dir', mode: DIR_MODE }]]);
  private readonly kids = new Map<string, Set<string>>([['/', new Set()]]);

  get(p: string): SnapNode | undefined {
    return this.nodes.get(p);
  }

  /** Entry names of a directory, sorted as readdir(3) + sort() would give them. */
  children(p: string): string[] {
    return [...(this.kids.get(p) ?? [])].sort();
  }

  get size(): number {
    return this.nodes.size;
  }

  /**
   * Adds a node at an absolute path, creating missing parents as directories. An existing directory is kept
   * (a second `list` of it must not wipe its entries); a longer file replaces a shorter one (config read twice).
   */
  put(p: string, node: SnapNode): void {
    if (!p.startsWith('/') || p !== path.posix.normalize(p) || p === '/') throw new Error(`not a normal absolute path: ${p}`);
    const parent = path.posix.dirname(p);
    const up = this.nodes.get(parent);
    if (!up) this.put(parent, { kind: 'dir', mode: DIR_MODE });
    else if (up.kind !== 'dir') throw new Error(`${parent} is a ${up.kind}, cannot hold ${p}`);
    const had = this.nodes.get(p);
    if (had?.kind === 'dir' && node.kind === 'dir') return;
    if (had?.kind === 'file' && node.kind === 'file' && had.data.length >= node.data.length) return;
    if (had && had.kind !== node.kind) throw new Error(`${p}: already a ${had.kind}, not a ${node.kind}`);
    this.nodes.set(p, node);
    this.kids.get(parent)!.add(path.posix.basename(p));
    if (node.kind === 'dir' && !this.kids.has(p)) this.kids.set(p, new Set());
  }

  /** Depth first, parents before children, each directory's entries sorted: the order `tar` and a reader expect. */
  *walk(from = '/'): Generator<[string, SnapNode]> {
    for (const name of this.children(from)) {
      const p = from === '/' ? `/${name}` : `${from}/${name}`;
      const n = this.nodes.get(p)!;
      yield [p, n];
      if (n.kind === 'dir') yield* this.walk(p);
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

  /** Builds a tree from archive entries; hard links become copies of their target, device nodes are left out. */
  static fromTar(buf: Uint8Array): SnapTree {
    const t = new SnapTree();
    for (const e of readTar(buf)) {
      if (e.path === '' || e.path.split('/').some((s) => s === '..' || s === '.')) throw new TarError(`unsafe path in archive: ${e.path}`);
      const p = `/${e.path}`;
      if (e.kind === 'dir') t.put(p, { kind: 'dir', mode: e.mode });
      else if (e.kind === 'file') t.put(p, { kind: 'file', mode: e.mode, data: e.data ?? new Uint8Array(0) });
      else if (e.kind === 'link') t.put(p, { kind: 'link', target: e.target ?? '' });
      else if (e.kind === 'hardlink') {
        const src = t.get(`/${e.target ?? ''}`);
        if (src?.kind !== 'file') throw new TarError(`hard link ${e.path} to ${e.target ?? '?'}: not an earlier regular file`);
        t.put(p, src);
      }
    }
    return t;
  }
}
