// A Host that records every call, by operation and path, and passes it through unchanged: for tests that count what
// the inventory reads.
import type { AccessAnswer, Host, ReadResult, StatInfo } from '../../src/host/host.js';

export class CountingHost implements Host {
  readonly root: string;
  readonly calls: string[] = [];
  readonly readParts?: Host['readParts'];
  constructor(private readonly inner: Host) {
    this.root = inner.root;
    if (inner.readParts) this.readParts = (p, pick) => (this.calls.push(`readParts ${p}`), inner.readParts!(p, pick));
  }
  private note<T>(op: string, p: string, r: Promise<T>): Promise<T> {
    this.calls.push(`${op} ${p}`);
    return r;
  }
  list(p: string): Promise<ReadResult<string[]>> { return this.note('list', p, this.inner.list(p)); }
  readText(p: string): Promise<ReadResult<string>> { return this.note('read', p, this.inner.readText(p)); }
  readBytes(p: string, max?: number): Promise<ReadResult<Uint8Array>> { return this.note('read', p, this.inner.readBytes(p, max)); }
  readLink(p: string): Promise<ReadResult<string>> { return this.note('readLink', p, this.inner.readLink(p)); }
  realPath(p: string): Promise<ReadResult<string>> { return this.note('realPath', p, this.inner.realPath(p)); }
  lstat(p: string): Promise<ReadResult<StatInfo>> { return this.note('lstat', p, this.inner.lstat(p)); }
  stat(p: string): Promise<ReadResult<StatInfo>> { return this.note('stat', p, this.inner.stat(p)); }
  access(p: string): Promise<AccessAnswer> { return this.note('access', p, this.inner.access(p)); }
  untrusted(p: string): string | null { return this.inner.untrusted(p); }
}
