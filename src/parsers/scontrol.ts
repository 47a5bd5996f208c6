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
  const r = reasonOf(line);
  return { ok: true, value: { name, state: st[1]!, reason: r ? r.text : null, reasonUser: r ? r.user : null, reasonTime: r ? r.time : null } };
}

/** What slurm_sprint_node_table prints after the reason (22.05 to 25.11), each as ` Key=` on the one line. */
const AFTER_REASON = / (?:Comment|Extra|InstanceId|InstanceType|ReservationName|TLSCertTokenSet|TLSCertLastRenewal|Topology|Parameters)=/;
/** Each further line of a reason, in one-line output: the line end (a space) and 7 spaces before it. */
const NEXT_LINE = ' '.repeat(8);

/**
 * `Reason=TEXT [user@time]`, TEXT's further lines after the stamp (8 spaces before each), then AFTER_REASON or the
 * end. The stamp is the first ` [..@..]` so followed: one inside the text (an admin's `[ops@ticket-42]` after ours)
 * does not end it, nor does the reason end at its first line; read short, an edited reason of ours would pass for
 * the very text gdrgate wrote. No stamp (reason_time 0): null, as no reason of ours.
 */
export function reasonOf(line: string): { text: string; user: string; time: string } | null {
  const at = line.indexOf(' Reason=');
  if (at < 0) return null;
  const text = line.slice(at + ' Reason='.length);
  const stamp = / \[([^\]@]*)@([^\]]*)\]/g;
  for (let m = stamp.exec(text); m !== null; m = stamp.exec(text)) {
    const rest = text.slice(m.index + m[0].length);
    const end = rest.search(AFTER_REASON);
    const more = end < 0 ? rest : rest.slice(0, end);
    if (more !== '' && !more.startsWith(NEXT_LINE)) continue;
    const lines = [text.slice(0, m.index), ...(more === '' ? [] : more.slice(NEXT_LINE.length).split(NEXT_LINE))];
    return { text: lines.join('\n'), user: m[1]!, time: m[2]! };
  }
  return null;
}

export function isDrainedOrDown(state: string): boolean {
  return /(^|\+)(DRAIN|DRAINED|DRAINING|DOWN|FAIL)(\+|$)/.test(state) || state.startsWith('DOWN');
}
