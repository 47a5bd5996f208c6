// Pure: what `fleet collect` decides before and after its one srun step: which named nodes slurmctld can run a
// step on now (the others would hold the step pending: listed, not waited for), the srun line, and who answered.
import type { NodeMissing } from './types.js';

export interface NodeStateLine {
  readonly name: string;
  readonly state: string;
  readonly reason: string | null;
}

/** `scontrol show node -o LIST`: one `NodeName=… State=…` line per node; Reason runs to its `[user@time]`. */
export function parseNodeLines(text: string): Map<string, NodeStateLine> {
  const out = new Map<string, NodeStateLine>();
  for (const line of text.split('\n')) {
    const name = /^NodeName=(\S+)/.exec(line)?.[1];
    const state = / State=(\S+)/.exec(line)?.[1];
    if (!name || !state) continue;
    out.set(name, { name, state, reason: / Reason=(.*?) \[[^\]]*\]/.exec(line)?.[1] ?? null });
  }
  return out;
}

/**
 * States in which slurmctld would not start a step on the node now: down, drained or draining, failing, not
 * responding (a trailing `*` in sinfo, `+NOT_RESPONDING` here), powered down or booting, in maintenance, future.
 */
export function unavailable(state: string): boolean {
  return /(^|\+)(DOWN|DRAIN|DRAINED|DRAINING|FAIL|FAILING|NOT_RESPONDING|FUTURE|POWERED_DOWN|POWERING_DOWN|POWERING_UP|POWER_DOWN|REBOOT_REQUESTED|REBOOT_ISSUED|MAINTENANCE|UNKNOWN)(\+|$)|\*$/.test(state);
}

export interface Preflight {
  readonly run: string[];
  readonly missing: NodeMissing[];
}

/** Nodes of the list slurmctld does not know, or cannot run a step on: missing with its own words. */
export function preflight(nodes: readonly string[], states: ReadonlyMap<string, NodeStateLine>): Preflight {
  const run: string[] = [];
  const missing: NodeMissing[] = [];
  for (const n of nodes) {
    const s = states.get(n);
    if (!s) missing.push({ node: n, why: 'slurmctld does not know this node' });
    else if (unavailable(s.state)) missing.push({ node: n, why: `slurmctld: State=${s.state}${s.reason ? ` Reason=${s.reason}` : ''}` });
    else run.push(n);
  }
  return { run, missing };
}

export interface SrunPlan {
  readonly nodes: readonly string[];
  readonly timeoutS: number;
  /** The gdrgate that runs on every node: the node binary and script, or /usr/sbin/gdrgate. */
  readonly self: readonly string[];
  readonly outDir: string;
  readonly root: string;
  readonly commands: boolean;
}

/**
 * One step, one task per node. `--immediate` gives up when the allocation is not granted within half the bound
 * (busy or reserved nodes), `--time` makes Slurm end the step itself if this process is killed, `--export=NONE`
 * keeps this shell's environment (NODE_OPTIONS, a stray GDRGATE_CONFIG) out of the tasks; each task names its file
 * after SLURMD_NODENAME (`snapshot --out-dir`).
 */
export function srunArgs(p: SrunPlan): string[] {
  return [
    `--nodelist=${p.nodes.join(',')}`,
    `--nodes=${p.nodes.length}`,
    `--ntasks=${p.nodes.length}`,
    '--ntasks-per-node=1',
    `--immediate=${Math.max(1, Math.floor(p.timeoutS / 2))}`,
    `--time=${Math.max(1, Math.ceil(p.timeoutS / 60))}`,
    '--job-name=gdrgate-collect',
    '--kill-on-bad-exit=0',
    '--export=NONE',
    '--chdir=/',
    '--',
    ...p.self,
    'snapshot',
    '--out-dir',
    p.outDir,
    '--root',
    p.root,
    ...(p.commands ? [] : ['--no-commands']),
  ];
}

/** srun's own stderr lines that name a node (`error: … on node node3: …`), for that node's reason. */
export function srunWordsFor(node: string, stderr: string): string | null {
  const re = new RegExp(`(^|[^A-Za-z0-9_.-])${node.replace(/[.]/g, '\\.')}([^A-Za-z0-9_.-]|$)`);
  const line = stderr.split('\n').find((l) => re.test(l) && /error|fail|abort|kill|cancel/i.test(l));
  return line ? line.trim().slice(0, 200) : null;
}
