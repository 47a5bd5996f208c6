// Pure parser of `scontrol show node -o NODE` (one line of Key=Value; Reason may hold spaces).
import type { Parsed } from './sysfs.js';

export interface NodeState {
  readonly name: string;
  /** "IDLE", "IDLE+DRAIN", "DOWN+NOT_RESPONDING", "MIXED+DRAIN" … */
  readonly state: string;
  readonly reason: string | null;
  readonly reasonUser: string | null;
  /** The time of `[user@time]`: with the text and the user, tells one writing of a reason from another. */
  readonly reasonTime: string | null;
}

/**
 * `node`: the node that was asked for. An answer about another node (or about several) is refused: acting on
 * it would drain or resume this node on another node's state.
 */
export function parseShowNode(text: string, node: string): Parsed<NodeState> {
  const lines = text.split('\n').filter((l) => l.startsWith('NodeName='));
  const line = lines[0];
  if (!line) return { ok: false, error: `no NodeName= line in ${JSON.stringify(text.slice(0, 120))}` };
  if (lines.length > 1) return { ok: false, error: `${lines.length} NodeName= lines for one node ${JSON.stringify(node)}` };
  const nm = /^NodeName=(\S+)/.exec(line);
  if (!nm) return { ok: false, error: 'empty NodeName=' };
  const name = nm[1]!;
  if (name !== node) return { ok: false, error: `answer names node ${JSON.stringify(name.slice(0, 64))}, not ${JSON.stringify(node)}` };
  const st = / State=(\S+)/.exec(line);
  if (!st) return { ok: false, error: 'no State= field' };
  // Reason=TEXT [user@time] — TEXT may contain spaces; the bracket closes it.
  const r = / Reason=(.*?) \[([^\]@]*)@([^\]]*)\]/.exec(line);
  return { ok: true, value: { name, state: st[1]!, reason: r ? r[1]! : null, reasonUser: r ? r[2]! : null, reasonTime: r ? r[3]! : null } };
}

export function isDrainedOrDown(state: string): boolean {
  return /(^|\+)(DRAIN|DRAINED|DRAINING|DOWN|FAIL)(\+|$)/.test(state) || state.startsWith('DOWN');
}
