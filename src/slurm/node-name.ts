// The one rule for a node name the gate hands to scontrol or matches against host patterns.

/** Longest name accepted: a DNS name's 253 characters, rounded up to what a reason or a log line can carry. */
export const NODE_NAME_MAX = 255;

/**
 * Letters, digits, `.`, `_`, `-`; not starting with `-` (an option to scontrol). No `,`, `[`, space or `=`: in
 * `nodename=<name>` Slurm reads those as a host list or another argument, and one drain would reach other nodes.
 */
const NAME_RE = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;

/** Why `name` cannot be used as a node name, or null when it can. */
export function badNodeName(name: string): string | null {
  if (name.length === 0) return 'empty node name';
  if (name.length > NODE_NAME_MAX) return `node name of ${name.length} characters (at most ${NODE_NAME_MAX})`;
  if (!NAME_RE.test(name)) return `node name ${JSON.stringify(name.slice(0, 64))} has characters other than letters, digits, . _ -`;
  return null;
}
