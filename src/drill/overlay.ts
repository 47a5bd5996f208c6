// A Host that answers exactly one drill fault differently and passes every other read through unchanged; how the
// fault changes a read is its area record's staging (areas/*.ts).
import { type AccessAnswer, type Host, type ReadResult, type StatInfo, textMax, wholeText } from '../host/host.js';
import type { Staging } from '../areas/types.js';
import { faultSpec, type Fault } from './fault.js';

const GONE = { ok: false, missing: true, reason: 'ENOENT: hidden by the drill' } as const;

export class DrillHost implements Host {
  readonly root: string;

  private readonly stage: Staging<Fault>;

  constructor(
    private readonly inner: Host,
    readonly fault: Fault,
  ) {
    this.root = inner.root;
    this.stage = faultSpec(fault).stage;
  }

  private hidden(p: string): boolean {
    return this.stage.hides?.(this.fault, p) ?? false;
  }

  async list(p: string): Promise<ReadResult<string[]>> {
    if (this.hidden(p)) return GONE;
    const r = await this.inner.list(p);
    const added = this.stage.lists?.(this.fault, p) ?? [];
    if (added.length) return { ok: true, value: [...(r.ok ? r.value : []), ...added] };
    if (!r.ok || !this.stage.hides) return r;
    return { ok: true, value: r.value.filter((n) => !this.hidden(`${p === '/' ? '' : p}/${n}`)) };
  }

  async readBytes(p: string, max?: number): Promise<ReadResult<Uint8Array>> {
    if (this.hidden(p)) return GONE;
    const staged = this.stage.adds?.(this.fault, p) ?? null;
    if (staged !== null) return { ok: true, value: Buffer.from(staged) };
    const r = await this.inner.readBytes(p, max);
    return r.ok && this.stage.rewrite ? { ok: true, value: this.stage.rewrite(this.fault, p, r.value) } : r;
  }

  async readText(p: string): Promise<ReadResult<string>> {
    return wholeText(await this.readBytes(p, textMax(p) + 1), p);
  }

  readLink(p: string): Promise<ReadResult<string>> {
    return this.hidden(p) ? Promise.resolve(GONE) : this.inner.readLink(p);
  }

  realPath(p: string): Promise<ReadResult<string>> {
    return this.hidden(p) ? Promise.resolve(GONE) : this.inner.realPath(p);
  }

  lstat(p: string): Promise<ReadResult<StatInfo>> {
    return this.hidden(p) ? Promise.resolve(GONE) : this.inner.lstat(p);
  }

  stat(p: string): Promise<ReadResult<StatInfo>> {
    return this.hidden(p) ? Promise.resolve(GONE) : this.inner.stat(p);
  }

  access(p: string): Promise<AccessAnswer> {
    return this.hidden(p) ? Promise.resolve({ access: 'unknown', why: 'ENOENT' }) : this.inner.access(p);
  }

  untrusted(p: string): string | null {
    return this.inner.untrusted(p);
  }
}
