// Talks to slurmctld through scontrol: read a node's state, drain it with our reason, resume it. Never hangs.
import type { Exec } from '../host/exec.js';
import { parseShowNode, type NodeState } from '../parsers/scontrol.js';

export interface ScontrolOptions {
  readonly path: string;
  readonly timeoutMs: number;
}

export type Read = { readonly ok: true; readonly node: NodeState } | { readonly ok: false; readonly why: string };
export type Write = { readonly ok: true } | { readonly ok: false; readonly why: string };

export class Scontrol {
  constructor(
    private readonly exec: Exec,
    private readonly opts: ScontrolOptions,
  ) {}

  async show(node: string): Promise<Read> {
    const r = await this.exec.run(this.opts.path, ['show', 'node', '-o', node], { timeoutMs: this.opts.timeoutMs });
    if (r.timedOut || r.error) return { ok: false, why: `scontrol show node: ${r.error ?? 'timed out'}` };
    if (r.exitCode !== 0) return { ok: false, why: `scontrol show node exited ${r.exitCode}: ${r.stderr.trim().slice(0, 200)}` };
    const p = parseShowNode(r.stdout);
    return p.ok ? { ok: true, node: p.value } : { ok: false, why: `scontrol show node: ${p.error}` };
  }

  private async update(node: string, args: string[]): Promise<Write> {
    const r = await this.exec.run(this.opts.path, ['update', `nodename=${node}`, ...args], { timeoutMs: this.opts.timeoutMs });
    if (r.timedOut || r.error) return { ok: false, why: `scontrol update: ${r.error ?? 'timed out'}` };
    return r.exitCode === 0 ? { ok: true } : { ok: false, why: `scontrol update exited ${r.exitCode}: ${r.stderr.trim().slice(0, 200)}` };
  }

  /** The reason is one argv element: no shell ever sees it. */
  drain(node: string, reason: string): Promise<Write> {
    return this.update(node, ['state=drain', `reason=${reason}`]);
  }

  resume(node: string): Promise<Write> {
    return this.update(node, ['state=resume']);
  }
}
