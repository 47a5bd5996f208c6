// Pure: a Slurm hostlist (`node[1-4,7],gpu[001-003],login1`, `rack[1-2]-n[1-2]`) expanded to node names, in the
// order `scontrol show hostnames` prints them (first bracket slowest). No slurmctld, no process: the collector
// knows its nodes before it asks anything, and the cluster test checks this against the real scontrol.
import { badNodeName } from '../slurm/node-name.js';

/** More names than one collection may name (a step of 100,000 tasks is beyond every srun we drive). */
export const MAX_HOSTS = 100_000;
const MAX_BOUND_DIGITS = 9;

export type Expanded = { readonly ok: true; readonly hosts: string[] } | { readonly ok: false; readonly error: string };

/** Top-level comma split: commas inside brackets belong to the bracket. */
function items(list: string): string[] | string {
  const out: string[] = [];
  let [depth, from] = [0, 0];
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === '[') {
      if (depth) return `nested [ at column ${i + 1}`;
      depth = 1;
    } else if (c === ']') {
      if (!depth) return `] without [ at column ${i + 1}`;
      depth = 0;
    } else if (c === ',' && !depth) {
      out.push(list.slice(from, i));
      from = i + 1;
    }
  }
  if (depth) return 'unclosed [';
  out.push(list.slice(from));
  return out;
}

/** `1-4,07,10-12` → the numbers as strings, zero-padded to the width of a bound written with a leading zero. */
function range(inner: string, room: number): string[] | string {
  const out: string[] = [];
  for (const part of inner.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return `[${inner.slice(0, 40)}]: ${JSON.stringify(part.slice(0, 20))} is not N or N-M`;
    const [loText, hiText = loText] = [m[1]!, m[2]];
    if (loText.length > MAX_BOUND_DIGITS || hiText.length > MAX_BOUND_DIGITS) return `[${inner.slice(0, 40)}]: a bound of more than ${MAX_BOUND_DIGITS} digits`;
    const [lo, hi] = [Number(loText), Number(hiText)];
    if (lo > hi) return `[${inner.slice(0, 40)}]: empty range ${loText}-${hiText}`;
    if (out.length + hi - lo + 1 > room) return `more than ${MAX_HOSTS} names`;
    const width = loText.length;
    for (let n = lo; n <= hi; n++) out.push(String(n).padStart(width, '0'));
  }
  return out;
}

export function expandHostlist(list: string): Expanded {
  const fail = (error: string): Expanded => ({ ok: false, error: `hostlist ${JSON.stringify(list.slice(0, 80))}: ${error}` });
  if (list.trim() === '') return fail('empty');
  const parts = items(list.trim());
  if (typeof parts === 'string') return fail(parts);
  const hosts: string[] = [];
  const seen = new Set<string>();
  for (const item of parts) {
    if (item === '') return fail('an empty name between commas');
    // Literal text and bracket groups, alternating: the cartesian product, first group slowest.
    let names = [''];
    for (const piece of item.split(/(\[[^\]]*\])/)) {
      if (piece === '') continue;
      const values = piece.startsWith('[') ? range(piece.slice(1, -1), MAX_HOSTS) : [piece];
      if (typeof values === 'string') return fail(values);
      if (names.length * values.length + hosts.length > MAX_HOSTS) return fail(`more than ${MAX_HOSTS} names`);
      names = names.flatMap((n) => values.map((v) => n + v));
    }
    for (const n of names) {
      const bad = badNodeName(n);
      if (bad) return fail(bad);
      if (!seen.has(n)) hosts.push(n);
      seen.add(n);
    }
  }
  return { ok: true, hosts };
}
