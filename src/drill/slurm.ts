// The Slurm clients a drill drives (sbatch, squeue, sinfo, scancel, scontrol): absolute paths, bounded calls, polling.
import path from 'node:path';
import { exists } from '../host/entries.js';
import type { Exec } from '../host/exec.js';
import { parseShowJob, type JobInfo } from '../parsers/scontrol-job.js';
import { isDrainedOrDown, parseShowNode, type NodeState } from '../parsers/scontrol.js';

export type Client = 'sbatch' | 'squeue' | 'sinfo' | 'scancel' | 'scontrol';

/** Beside the configured scontrol when it is there (same Slurm install), else /usr/bin. */
export function clientPath(scontrol: string, name: Client): string {
  if (name === 'scontrol') return scontrol;
  const beside = path.join(path.dirname(scontrol), name);
  return exists(beside) ? beside : `/usr/bin/${name}`;
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

  /** `scontrol show job -o`: where the job runs or ran (NodeList, BatchHost), how often it was requeued; null: unread. */
  async showJob(id: string): Promise<JobInfo | null> {
    const r = await this.call('scontrol', ['show', 'job', '-o', id]);
    const p = r.ok ? parseShowJob(r.out, id) : null;
    return p?.ok ? p.value : null;
  }

  /** Lets a requeued job run on another node of its partition: released when held, no longer pinned to `node`. */
  async moveOff(id: string, node: string, held: boolean): Promise<{ ok: boolean; why: string }> {
    if (held) {
      const r = await this.call('scontrol', ['release', id]);
      if (!r.ok) return r;
    }
    // ReqNodeList= (blank) clears the -w of the submission; ExcNodeList keeps it off the drilled node.
    return this.call('scontrol', ['update', `jobid=${id}`, 'ReqNodeList=', `ExcNodeList=${node}`]);
  }

  /** The nodes of `partition` other than `node` that could take a job now (not drained, down or failed). */
  async otherNodes(partition: string, node: string): Promise<{ ok: true; nodes: string[] } | { ok: false; why: string }> {
    const r = await this.call('sinfo', ['-h', '-N', '-p', partition, '-o', '%N %T']);
    if (!r.ok) return { ok: false, why: r.why };
    const nodes = r.out
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter(([n, st]) => n && st && n !== node && !isDrainedOrDown(st.toUpperCase()) && !st.endsWith('*'))
      .map(([n]) => n!);
    return { ok: true, nodes: [...new Set(nodes)] };
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
