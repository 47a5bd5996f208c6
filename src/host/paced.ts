// A Host whose every read first asks a pace (inventory/read.ts Pacer): the reads under it are synchronous, so this
// is where a long inventory gives the event loop its turns and where work past the run's deadline stops. One place
// for every reader, present and future: no per-file loop has to remember it.
import type { Host, ReadResult } from './host.js';

export interface Pace {
  /** Resolves at once or after a turn of the event loop; throws once the run's deadline has passed. */
  turn(): Promise<void>;
}

/**
 * `listed(path, n)`: told the size of every directory listing before anyone iterates it; may throw (a cap on what
 * the caller would do per entry, inventory/limits.ts).
 */
export function pacedHost(h: Host, pace: Pace, listed?: (path: string, n: number) => void): Host {
  return {
    root: h.root,
    list: async (p) => {
      await pace.turn();
      const r = await h.list(p);
      if (r.ok) listed?.(p, r.value.length);
      return r;
    },
    readText: async (p) => (await pace.turn(), h.readText(p)),
    readBytes: async (p, max) => (await pace.turn(), h.readBytes(p, max)),
    ...(h.readParts
      ? {
          async readParts<T>(p: string, pick: (at: (offset: number, length: number) => Uint8Array) => T): Promise<ReadResult<T>> {
            await pace.turn();
            return h.readParts!(p, pick);
          },
        }
      : {}),
    readLink: async (p) => (await pace.turn(), h.readLink(p)),
    realPath: async (p) => (await pace.turn(), h.realPath(p)),
    lstat: async (p) => (await pace.turn(), h.lstat(p)),
    stat: async (p) => (await pace.turn(), h.stat(p)),
    access: async (p) => (await pace.turn(), h.access(p)),
    untrusted: (p) => h.untrusted(p),
  };
}
