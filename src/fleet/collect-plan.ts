// Pure: what `fleet collect` decides before and after its one srun step: which named nodes slurmctld can run a
// step on now (the others would hold the step pending: listed, not waited for), the srun line, and who answered.
import { reasonOf } from '../parsers/scontrol.js';
import { compressHostlist } from './hostlist.js';
import type { NodeMissing } from './types.js';

/**
 * The longest one argument fleet collect passes: Linux refuses an exec with an argument of 128 KiB or more
 * (MAX_ARG_STRLEN, E2BIG), and 10,000 names written out are several times that. Kept well below it.
 */
export const MAX_ARG_CHARS = 100_000;

/**
 * Node names as Slurm hostlist expressions (`rack01-node[0001-0250],…`: srun's --nodelist and `scontrol show node`
 * both take one, src/common/hostlist.c), each at most `limit` characters: one for any fleet whose names number
 * their nodes, several where the names do not compress (each a whole list of names, never a name cut).
 */
export function hostlistChunks(nodes: readonly string[], limit = MAX_ARG_CHARS): string[] {
  const out: string[] = [];
  let cur = '';
  for (const p of compressHostlist(nodes)) {
    if (cur && cur.length + 1 + p.length > limit) {
      out.push(cur);
      cur = p;
    } else cur = cur ? `${cur},${p}` : p;
  }
  if (cur) out.push(cur);
  return out;
}

export interface NodeStateLine {
  readonly name: string;
  readonly state: string;
  readonly reason: string | null;
}

/**
 * `scontrol show node -o LIST`: one `NodeName=… State=…` line per node; its Reason read as a drain's is (the whole
 * text, an admin's note after a stamp in it and its further lines, here joined by " / " on the one line said).
 */
export function parseNodeLines(text: string): Map<string, NodeStateLine> {
  const out = new Map<string, NodeStateLine>();
  for (const line of text.split('\n')) {
    const name = /^NodeName=(\S+)/.exec(line)?.[1];
    const state = / State=(\S+)/.exec(line)?.[1];
    if (!name || !state) continue;
    out.set(name, { name, state, reason: reasonOf(line)?.text.replaceAll('\n', ' / ') ?? null });
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
  /**
   * A file naming the nodes one a line, for a list whose hostlist is longer than one argument may be: srun reads
   * --nodelist as a file when it holds a '/' (src/common/proc_args.c verify_node_list). Absent: the hostlist.
   */
  readonly nodeFile?: string;
}

/**
 * One step, one task per node. `--immediate` gives up when the allocation is not granted within half the bound
 * (busy or reserved nodes), `--time` makes Slurm end the step itself if this process is killed, `--export=NONE`
 * keeps this shell's environment (NODE_OPTIONS, a stray GDRGATE_CONFIG) out of the tasks; each task names its file
 * after SLURMD_NODENAME (`snapshot --out-dir`). The nodes go as a compressed hostlist, or as `nodeFile`.
 */
export function srunArgs(p: SrunPlan): string[] {
  return [
    `--nodelist=${p.nodeFile ?? hostlistChunks(p.nodes, Number.MAX_SAFE_INTEGER)[0] ?? ''}`,
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
