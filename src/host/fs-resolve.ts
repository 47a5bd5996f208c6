// realpath(3) for FsHost, walked in kernel paths so that a capture root is a chroot: links resolve inside it.
import fs from 'node:fs';

/** Symbolic links followed in one resolution before giving up, as the kernel's path walk does (ELOOP). */
export const MAX_LINKS = 40;
/** PATH_MAX (include/uapi/linux/limits.h): a longer kernel path, or a resolution that grows past it, is ENAMETOOLONG. */
export const MAX_PATH = 4096;

/** The code a resolution that would leave a capture root throws with: unreadable, never followed, never missing. */
export const LEAVES_ROOT = 'ELEAVESROOT';

export function errno(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

function leaves(kpath: string, what: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`unreadable: leaves the root: ${what} (resolving ${kpath})`), { code: LEAVES_ROOT });
}

/**
 * Resolves every link of a clean kernel path, component by component, with the answer for each component kept
 * for the resolver's life: the inventory resolves ~60 device links that share their first dozen components, so
 * each component costs one readlink per run instead of one per device (900 syscalls fewer on an 8-GPU node).
 * `confined` (every root but '/'): the root is a chroot. An absolute target starts again at the root (a live node's
 * `/var/run -> /run` reads the capture's /run), and only `..` above the root, the one way out left, is refused
 * (LEAVES_ROOT) instead of being followed onto this machine's own files.
 */
export class Resolver {
  /** Kernel path → its link text, or null when it is not a link. */
  private readonly links = new Map<string, string | null>();
  /**
   * Kernel path → its resolution: a capture's reads resolve their directory first, and the inventory reads a
   * dozen attributes per directory, so the walk runs once per directory (the links it read are kept anyway).
   */
  private readonly done = new Map<string, string>();
  /**
   * Kernel path → why readlink failed (ENOENT, ENOTDIR, EACCES): an absent component is asked about by every path
   * under it (/sys/kernel/mm, /dev in a capture without them), and answers the same for the resolver's life.
   */
  private readonly failed = new Map<string, { readonly code: string; readonly what: string }>();

  constructor(
    private readonly machine: (kpath: string) => string,
    private readonly confined: boolean,
  ) {}

  resolve(kpath: string): string {
    let r = this.done.get(kpath);
    if (r === undefined) {
      r = this.walk(kpath);
      this.done.set(kpath, r);
    }
    return r;
  }

  private walk(kpath: string): string {
    if (kpath.length > MAX_PATH) throw errno('ENAMETOOLONG', `file name too long, realpath '${this.machine(kpath)}'`);
    // Reversed, so that taking the next component and pushing a link's components are O(1) at the end.
    const todo = kpath.split('/').filter((c) => c !== '' && c !== '.').reverse();
    let cur = '';
    let followed = 0;
    while (todo.length > 0) {
      const name = todo.pop()!;
      if (name === '..') {
        // A clean path has no `..` left: this one comes from a link target.
        if (cur === '' && this.confined) throw leaves(kpath, 'a link target climbs above it');
        cur = cur.slice(0, cur.lastIndexOf('/'));
        continue;
      }
      const next = `${cur}/${name}`;
      const link = this.linkOf(next, kpath);
      if (link === null) {
        cur = next;
        continue;
      }
      if (++followed > MAX_LINKS) throw errno('ELOOP', `too many symbolic links encountered, realpath '${this.machine(kpath)}'`);
      const parts = link.split('/').filter((c) => c !== '' && c !== '.');
      if (todo.length + parts.length > MAX_PATH) throw errno('ENAMETOOLONG', `file name too long, realpath '${this.machine(kpath)}'`);
      for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]!);
      if (link.startsWith('/')) cur = '';
    }
    return cur === '' ? '/' : cur;
  }

  private linkOf(next: string, kpath: string): string | null {
    let link = this.links.get(next);
    if (link !== undefined) return link;
    let failed = this.failed.get(next);
    if (failed === undefined) {
      try {
        link = fs.readlinkSync(this.machine(next));
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        if (err.code === 'EINVAL') link = null; // exists and is not a link
        else this.failed.set(next, (failed = { code: err.code ?? 'EIO', what: err.message.replace(/^\w+: /, '').split(',')[0]! }));
      }
    }
    // ENOENT, ENOTDIR, EACCES: worded as realpath(3) would have been.
    if (failed !== undefined) throw errno(failed.code, `${failed.what}, realpath '${this.machine(kpath)}'`);
    this.links.set(next, link!);
    return link!;
  }
}
