// A Host wrapper that reads each path once and records what the inventory asked for: a snapshot stores exactly those answers.
import { type AccessAnswer, type Host, type ReadResult, type StatInfo, textMax, wholeText } from '../host/host.js';

export type Op = 'list' | 'read' | 'readLink' | 'realPath' | 'lstat' | 'stat';

export interface Request {
  readonly op: Op;
  readonly path: string;
  /** For reads: the byte cap asked for (FsHost's default is 1 MiB). */
  readonly max?: number;
}

export const DEFAULT_MAX = 1 << 20;

export class MemoHost implements Host {
  readonly root: string;
  /** Requests made while recording, in first-asked order, without repeats. */
  readonly requests: Request[] = [];
  recording = true;
  private readonly cache = new Map<string, Promise<ReadResult<unknown>>>();

  constructor(private readonly src: Host) {
    this.root = src.root;
  }

  private memo<T>(req: Request, load: () => Promise<ReadResult<T>>): Promise<ReadResult<T>> {
    const key = `${req.op}\0${req.max ?? ''}\0${req.path}`;
    let hit = this.cache.get(key) as Promise<ReadResult<T>> | undefined;
    if (!hit) {
      hit = load();
      this.cache.set(key, hit);
      if (this.recording) this.requests.push(req);
    }
    return hit;
  }

  /** The (memoized) answer to a request. */
  answer(r: Request): Promise<ReadResult<unknown>> {
    if (r.op === 'read') return this.readBytes(r.path, r.max);
    if (r.op === 'list') return this.list(r.path);
    return this[r.op](r.path);
  }

  list(p: string): Promise<ReadResult<string[]>> {
    return this.memo({ op: 'list', path: p }, () => this.src.list(p));
  }

  readBytes(p: string, max = DEFAULT_MAX): Promise<ReadResult<Uint8Array>> {
    return this.memo({ op: 'read', path: p, max }, () => this.src.readBytes(p, max));
  }

  async readText(p: string): Promise<ReadResult<string>> {
    return wholeText(await this.readBytes(p, textMax(p) + 1), p);
  }

  readLink(p: string): Promise<ReadResult<string>> {
    return this.memo({ op: 'readLink', path: p }, () => this.src.readLink(p));
  }

  realPath(p: string): Promise<ReadResult<string>> {
    return this.memo({ op: 'realPath', path: p }, () => this.src.realPath(p));
  }

  lstat(p: string): Promise<ReadResult<StatInfo>> {
    return this.memo({ op: 'lstat', path: p }, () => this.src.lstat(p));
  }

  stat(p: string): Promise<ReadResult<StatInfo>> {
    return this.memo({ op: 'stat', path: p }, () => this.src.stat(p));
  }

  /** Passed through, not recorded: a snapshot stores no permissions of the process that took it. */
  access(p: string): Promise<AccessAnswer> {
    return this.src.access(p);
  }

  untrusted(p: string): string | null {
    return this.src.untrusted(p);
  }
}
