// Test-side: the files the gate reads on a tree (as the snapshot recorder lists them), and a Host that answers one of
// them broken (unreadable, empty, garbage, oversized, cut short, another function's config space, or its directory
// entry duplicated; a listed directory or a looked-at path: unreadable), the rest as the tree has them.
import { type AccessAnswer, type Host, type ReadResult, type StatInfo, wholeText } from '../../src/host/host.js';
import { buildInventory, type BuildOptions } from '../../src/inventory/build.js';
import type { Inventory } from '../../src/model/inventory.js';
import { MemoHost } from '../../src/snapshot/memo.js';

export type Mutation = 'unreadable' | 'empty' | 'garbage' | 'oversized' | 'duplicated' | 'truncated' | 'foreign';
export const MUTATIONS: readonly Mutation[] = ['unreadable', 'empty', 'garbage', 'oversized', 'duplicated', 'truncated', 'foreign'];

export interface Recorded {
  /** A Host answering every path from memory after the first read (the tree is read from disk once). */
  readonly host: MemoHost;
  /** Every file the inventory read (the recorder's `read` requests), in first-read order. */
  readonly files: readonly string[];
  /** Every directory it listed. */
  readonly lists: readonly string[];
  /** Every link it resolved or read (`device`, `driver`, `iommu_group`, a device's directory): these can only be unreadable. */
  readonly links: readonly string[];
  /** Every path it looked at (lstat, stat) without reading: these can only be unreadable too. */
  readonly stats: readonly string[];
  readonly inv: Inventory;
}

/** Runs the inventory once on a recording Host (src/snapshot/memo.ts, what `gdrgate snapshot` stores) and keeps what it read. */
export async function record(src: Host, opts: BuildOptions = {}): Promise<Recorded> {
  const host = new MemoHost(src);
  const inv = await buildInventory(host, opts);
  host.recording = false;
  const files = [...new Set(host.requests.filter((r) => r.op === 'read').map((r) => r.path))];
  const lists = [...new Set(host.requests.filter((r) => r.op === 'list').map((r) => r.path))];
  const links = [...new Set(host.requests.filter((r) => r.op === 'realPath' || r.op === 'readLink').map((r) => r.path))];
  const stats = [...new Set(host.requests.filter((r) => r.op === 'lstat' || r.op === 'stat').map((r) => r.path))];
  return { host, files, lists, links, stats, inv };
}

const BDF = /^([0-9a-f]{4}:[0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/;

/** A name for a twin of `name` that `siblings` lacks, of the same shape (a BDF stays a BDF, cpu5 becomes cpu1005). */
export function twinName(name: string, siblings: readonly string[]): string | null {
  const taken = new Set(siblings);
  const b = BDF.exec(name);
  if (b) {
    for (let dev = 0x1f; dev >= 0; dev--)
      for (let fn = 7; fn >= 0; fn--) {
        const n = `${b[1]}:${dev.toString(16).padStart(2, '0')}.${fn}`;
        if (!taken.has(n)) return n;
      }
    return null;
  }
  const m = /^(.*?)(\d+)([^\d]*)$/.exec(name);
  if (!m) return null;
  for (let k = 1000; k < 1100; k++) {
    const n = `${m[1]}${Number(m[2]) + k}${m[3]}`;
    if (!taken.has(n)) return n;
  }
  return null;
}

/** The listed directory a file sits under, and the entry of that directory on its way: what duplicating it copies. */
export function duplicable(file: string, lists: readonly string[]): { readonly dir: string; readonly entry: string } | null {
  let best: { dir: string; entry: string } | null = null;
  for (const d of lists) {
    if (!file.startsWith(`${d}/`)) continue;
    const entry = file.slice(d.length + 1).split('/')[0]!;
    if (entry === file.slice(d.length + 1)) continue; // the file itself is the entry: a twin of a file is no duplicate record
    if (!best || d.length > best.dir.length) best = { dir: d, entry };
  }
  return best;
}

/** Bytes no kernel writes in a text attribute: NUL, a high byte, an escape sequence, a word; `salt` varies it. */
export function garbage(salt: number): string {
  return `\u0000\u00ff\u001b[0m gdrgate-garbage-${salt.toString(36)} \u0007`;
}

export interface Case {
  /** A file read, a link followed, a directory listed or a path looked at, by `kind`. */
  readonly file: string;
  readonly kind: Mutation | 'unlistable';
  readonly salt: number;
}

/**
 * `base` with one case applied. Unreadable: EACCES as FsHost words it. Oversized: what FsHost returns for a file
 * longer than the byte cap asked for (the first `max` bytes of the content repeated). Duplicated: the listing of the
 * file's directory gains a twin of its entry, and every path under the twin answers as under the original.
 */
export class MutatingHost implements Host {
  readonly root: string;
  private readonly twin: { readonly dir: string; readonly from: string; readonly to: string } | null;

  constructor(
    private readonly base: Host,
    private readonly c: Case,
    lists: readonly string[],
    siblings: (dir: string) => readonly string[],
  ) {
    this.root = base.root;
    const d = c.kind === 'duplicated' ? duplicable(c.file, lists) : null;
    const name = d ? twinName(d.entry, siblings(d.dir)) : null;
    this.twin = d && name ? { dir: d.dir, from: `${d.dir}/${d.entry}`, to: `${d.dir}/${name}` } : null;
  }

  /** Whether this case changes anything (a file with no listed directory above it cannot be duplicated; only a
   * config space can hold another function's, one of another base class among `others`). */
  get applies(): boolean {
    if (this.c.kind === 'foreign') return this.c.file.endsWith('/config') && this.others !== undefined;
    return this.c.kind !== 'duplicated' || this.twin !== null;
  }

  /** For 'foreign': the config spaces read on the tree (another function's is what this one answers). */
  others?: readonly string[];

  /** A path below an unreadable link or path of the case: what lies beneath cannot be reached either (EACCES, ELOOP). */
  private beneath(p: string): ReadResult<never> | null {
    return this.c.kind === 'unreadable' && p.startsWith(`${this.c.file}/`) ? { ok: false, missing: false, reason: `EACCES: permission denied, '${p}'` } : null;
  }

  private map(p: string): string {
    const t = this.twin;
    return t && (p === t.to || p.startsWith(`${t.to}/`)) ? t.from + p.slice(t.to.length) : p;
  }

  async list(p: string): Promise<ReadResult<string[]>> {
    // A listing that fails as FsHost words EACCES (an ELOOP, EIO or ENOTDIR answers the same way: not missing).
    if (p === this.c.file && this.c.kind === 'unlistable') return { ok: false, missing: false, reason: `EACCES: permission denied, scandir '${p}'` };
    const below = this.beneath(p);
    if (below) return below;
    const r = await this.base.list(this.map(p));
    const t = this.twin;
    if (!t || p !== t.dir || !r.ok) return r;
    return { ok: true, value: [...r.value, t.to.slice(t.dir.length + 1)].sort() };
  }

  async readBytes(p: string, max = 1 << 20): Promise<ReadResult<Uint8Array>> {
    const below = this.beneath(p);
    if (below) return below;
    if (p !== this.c.file || this.c.kind === 'duplicated' || this.c.kind === 'unlistable') return this.base.readBytes(this.map(p), max);
    switch (this.c.kind) {
      case 'unreadable':
        return { ok: false, missing: false, reason: `EACCES: permission denied, open '${p}'` };
      case 'empty':
        return { ok: true, value: new Uint8Array(0) };
      case 'garbage':
        return { ok: true, value: Buffer.from(garbage(this.c.salt), 'latin1') };
      case 'truncated': {
        // Cut short as a torn read or capture leaves it: text at a line boundary (half its lines), bytes at half.
        const r = await this.base.readBytes(p, max);
        if (!r.ok || r.value.length < 2) return r;
        const b = Buffer.from(r.value);
        const lines = b.includes(0) ? null : b.toString('latin1').split('\n');
        if (lines && lines.length > 2) return { ok: true, value: Buffer.from(`${lines.slice(0, Math.floor((lines.length - 1) / 2)).join('\n')}\n`, 'latin1') };
        return { ok: true, value: b.subarray(0, Math.floor(b.length / 2)) };
      }
      case 'foreign': {
        // Another function's config space, of another base class (byte 0x0b): a shifted or foreign read.
        const mine = await this.base.readBytes(p, max);
        for (const o of this.others ?? []) {
          const r = o === p ? null : await this.base.readBytes(o, max);
          if (r?.ok && mine.ok && r.value.length > 0x0b && mine.value.length > 0x0b && r.value[0x0b] !== mine.value[0x0b]) return r;
        }
        return mine;
      }
      case 'oversized': {
        const r = await this.base.readBytes(p, max);
        const unit = r.ok && r.value.length ? Buffer.from(r.value) : Buffer.from('9');
        const out = Buffer.alloc(max);
        for (let at = 0; at < max; at += unit.length) unit.copy(out, at, 0, Math.min(unit.length, max - at));
        return { ok: true, value: out };
      }
    }
  }

  /** As the Hosts decode it (host.ts wholeText): a kernel file cut short is refused there, as on a real tree. */
  async readText(p: string): Promise<ReadResult<string>> {
    return wholeText(await this.readBytes(p), p);
  }

  /** A link of the case that cannot be followed: a loop, as FsHost words ELOOP. */
  private brokenLink(p: string): ReadResult<string> | null {
    return p === this.c.file && this.c.kind === 'unreadable' ? { ok: false, missing: false, reason: `ELOOP: too many symbolic links encountered, '${p}'` } : this.beneath(p);
  }

  readLink(p: string): Promise<ReadResult<string>> {
    const broken = this.brokenLink(p);
    return broken ? Promise.resolve(broken) : this.base.readLink(this.map(p));
  }

  realPath(p: string): Promise<ReadResult<string>> {
    const broken = this.brokenLink(p);
    return broken ? Promise.resolve(broken) : this.base.realPath(this.map(p));
  }

  lstat(p: string): Promise<ReadResult<StatInfo>> {
    return this.brokenStat(p) ?? this.base.lstat(this.map(p));
  }

  stat(p: string): Promise<ReadResult<StatInfo>> {
    return this.brokenStat(p) ?? this.base.stat(this.map(p));
  }

  /** A path of the case that cannot be looked at: EACCES on a directory above it, as FsHost words it. */
  private brokenStat(p: string): Promise<ReadResult<StatInfo>> | null {
    if (p === this.c.file && this.c.kind === 'unreadable') return Promise.resolve({ ok: false, missing: false, reason: `EACCES: permission denied, lstat '${p}'` });
    const below = this.beneath(p);
    return below ? Promise.resolve(below) : null;
  }

  access(p: string): Promise<AccessAnswer> {
    return this.base.access(this.map(p));
  }

  untrusted(p: string): string | null {
    return this.base.untrusted(this.map(p));
  }
}

/** A file's path with its device addresses and numbers wildcarded: one shape per kind of attribute. */
export function shapeOf(file: string): string {
  return file
    .replace(/\/pci[0-9a-f]{4}:[0-9a-f]{2}\//g, '/pci<bus>/')
    .replace(/[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]/g, '<bdf>')
    .replace(/\d+/g, 'N');
}
