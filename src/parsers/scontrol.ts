// Pure parser of `scontrol show node -o NODE` (one line of Key=Value; Reason may hold spaces).
import type { Parsed } from './sysfs.js';

export interface NodeState {
  readonly name: string;
  /** "IDLE", "IDLE+DRAIN", "DOWN+NOT_RESPONDING", "MIXED+DRAIN" … */
  readonly state: string;
  readonly reason: string | null;
  readonly reasonUser: string | null;
}

export function parseShowNode(text: string): Parsed<NodeState> {
  const line = text.split('\n').find((l) => l.startsWith('NodeName='));
  if (!line) return { ok: false, error: `no NodeName= line in ${JSON.stringify(text.slice(0, 120))}` };
  const nm = /^NodeName=(\S+)/.exec(line);
  if (!nm) return { ok: false, error: 'empty NodeName=' };
  const name = nm[1]!;
  const st = / State=(\S+)/.exec(line);
  if (!st) return { ok: false, error: 'no State= field' };
  // Reason=TEXT [user@time] — TEXT may contain spaces; the bracket closes it.
  const r = / Reason=(.*?) \[([^\]@]*)@[^\]]*\]/.exec(line);
  return { ok: true, value: { name, state: st[1]!, reason: r ? r[1]! : null, reasonUser: r ? r[2]! : null } };
}

export function isDrainedOrDown(state: string): boolean {
  return /(^|\+)(DRAIN|DRAINED|DRAINING|DOWN|FAIL)(\+|$)/.test(state) || state.startsWith('DOWN');
}
