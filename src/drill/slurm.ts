// The Slurm clients a drill drives (sbatch, squeue, sinfo, scancel, scontrol): absolute paths, bounded calls, polling.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Exec } from '../host/exec.js';
import { parseShowNode, type NodeState } from '../parsers/scontrol.js';

export type Client = 'sbatch' | 'squeue' | 'sinfo' | 'scancel' | 'scontrol';

/** Beside the configured scontrol when it is there (same Slurm install), else /usr/bin. */
export function clientPath(scontrol: string, name: Client): string {
  if (name === 'scontrol') return scontrol;
  const beside = path.join(path.dirname(scontrol), name);
  return existsSync(beside) ? beside : `/usr/bin/${name}`;
}

/** squeue %r for a job whose prolog failed and was requeued held (Slurm: "launch failed requeued held"). */
export const HELD = 'launch failed requeued held';
const DONE_RE = /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)$/;
export const isTerminal = (state: string): boolean => DONE_RE.test(state);

export class SlurmClients {
  constructor(
    private readonly exec: Exec,
    private readonly scontrol: string,
    private readonly timeoutMs: number,
  ) {}

  private async call(name: Client, args: readonly string[]): Promise<{ ok: boolean; out: string; why: string }> {
    const r = await this.exec.run(clientPath(this.scontrol, name), args, { timeoutMs: this.timeoutMs });
    const why = r.timedOut || r.error ? `${name}: ${r.error ?? 'timed out'}` : r.exitCode !== 0 ? `${name} exited ${r.exitCode}: ${r.stderr.trim().slice(0, 200)}` : '';
    return { ok: why === '', out: r.stdout, why };
  }

  async show(node: string): Promise<NodeState | null> {
    const r = await this.call('scontrol', ['show', 'node', '-o', node]);
    const p = r.ok ? parseShowNode(r.out, node) : null;
    return p?.ok ? p.value : null;
  }

  /** A one-line job pinned to the node; returns its id. */
  async submit(node: string, name: string, reservation?: string): Promise<{ ok: true; id: string } | { ok: false; why: string }> {
    const args = ['--parsable', '-w', node, '-N1', '-n1', '-J', name, '-o', '/dev/null', ...(reservation ? [`--reservation=${reservation}`] : []), '--wrap', 'true'];
    const r = await this.call('sbatch', args);
    const id = r.out.trim().split(';')[0] ?? '';
    return r.ok && /^\d+$/.test(id) ? { ok: true, id } : { ok: false, why: r.why || `sbatch printed ${JSON.stringify(r.out.slice(0, 80))}` };
  }

  /** `STATE|REASON` of a job, finished ones included (while slurmctld still keeps them: MinJobAge). */
  async job(id: string): Promise<{ state: string; reason: string }> {
    const r = await this.call('squeue', ['-h', '-t', 'all', '-j', id, '-o', '%T|%r']);
    const [state = '', reason = ''] = r.out.trim().split('|');
    return { state: state || (r.ok ? 'GONE' : 'UNKNOWN'), reason };
  }

  async sinfoR(node: string): Promise<string> {
    const r = await this.call('sinfo', ['-R', '-h', '-n', node]);
    return r.ok ? r.out.trimEnd() : r.why;
  }

  async cancel(id: string): Promise<boolean> {
    return (await this.call('scancel', [id])).ok;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until `ok` or `timeoutMs`; returns the last value and the milliseconds it took. */
export async function waitFor<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs: number, everyMs = 200): Promise<{ ok: boolean; value: T; ms: number }> {
  const t0 = performance.now();
  for (;;) {
    const value = await probe();
    const ms = Math.round(performance.now() - t0);
    if (ok(value)) return { ok: true, value, ms };
    if (ms > timeoutMs) return { ok: false, value, ms };
    await sleep(everyMs);
  }
}

/** Plain idle: no DRAIN, no COMPLETING, nothing allocated. */
export const isIdle = (n: NodeState | null): boolean => n !== null && n.state === 'IDLE';
export const isDrained = (n: NodeState | null): boolean => n !== null && /(^|\+)(DRAIN|DRAINED|DRAINING)(\+|$)/.test(n.state);
