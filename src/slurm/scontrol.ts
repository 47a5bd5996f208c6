// Talks to slurmctld through scontrol: read a node's state, drain it with our reason, resume it. Never hangs.
import type { Exec } from '../host/exec.js';
import { parseShowNode, type NodeState } from '../parsers/scontrol.js';
import { badNodeName } from './node-name.js';

export interface ScontrolOptions {
  readonly path: string;
  readonly timeoutMs: number;
  /** performance.now() by which every call must be over (the run's hard deadline); none: no limit. */
  readonly deadline?: number;
}

export type Read = { readonly ok: true; readonly node: NodeState } | { readonly ok: false; readonly why: string };
export type Write = { readonly ok: true } | { readonly ok: false; readonly why: string };

/** What scontrol said of its failure: stderr, else stdout (22.05 prints "Node x not found" there). */
const said = (r: { readonly stdout: string; readonly stderr: string }): string => (r.stderr.trim() || r.stdout.trim() || 'nothing said').slice(0, 200);

export class Scontrol {
  constructor(
    private readonly exec: Exec,
    private readonly opts: ScontrolOptions,
  ) {}

  /** Each call gets what is left of the run's deadline, at most its own timeout. */
  private budget(): number {
    const left = this.opts.deadline === undefined ? Infinity : this.opts.deadline - performance.now();
    return Math.floor(Math.min(this.opts.timeoutMs, left));
  }

  /**
   * How long a run waits for another's drain: that run's read and write (each up to the timeout), leaving this run's
   * own read its whole timeout before the deadline.
   */
  holderWaitMs(): number {
    const left = this.opts.deadline === undefined ? Infinity : this.opts.deadline - performance.now();
    return Math.max(0, Math.min(2 * this.opts.timeoutMs + 500, left - this.opts.timeoutMs));
  }

  async show(node: string): Promise<Read> {
    const bad = badNodeName(node);
    if (bad) return { ok: false, why: `scontrol show node: ${bad}` };
    const ms = this.budget();
    if (ms < 100) return { ok: false, why: 'scontrol show node: no time left before the deadline' };
    const r = await this.exec.run(this.opts.path, ['show', 'node', '-o', node], { timeoutMs: ms });
    if (r.timedOut || r.error) return { ok: false, why: `scontrol show node: ${r.error ?? 'timed out'}` };
    if (r.exitCode !== 0) return { ok: false, why: `scontrol show node exited ${r.exitCode}: ${said(r)}` };
    const p = parseShowNode(r.stdout, node);
    return p.ok ? { ok: true, node: p.value } : { ok: false, why: `scontrol show node: ${p.error}` };
  }

  private async update(node: string, args: string[]): Promise<Write> {
    const bad = badNodeName(node);
    if (bad) return { ok: false, why: `scontrol update: ${bad}` };
    const ms = this.budget();
    if (ms < 100) return { ok: false, why: 'scontrol update: no time left before the deadline' };
    const r = await this.exec.run(this.opts.path, ['update', `nodename=${node}`, ...args], { timeoutMs: ms });
    if (r.timedOut || r.error) return { ok: false, why: `scontrol update: ${r.error ?? 'timed out'}` };
    return r.exitCode === 0 ? { ok: true } : { ok: false, why: `scontrol update exited ${r.exitCode}: ${said(r)}` };
  }

  /** The reason is one argv element: no shell ever sees it. */
  drain(node: string, reason: string): Promise<Write> {
    return this.update(node, ['state=drain', `reason=${reason}`]);
  }

  resume(node: string): Promise<Write> {
    return this.update(node, ['state=resume']);
  }
}
