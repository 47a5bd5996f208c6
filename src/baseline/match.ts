// NHC-style host patterns: glob (`gpu*`), `/regex/`, Slurm hostlists (`gpu[001-064,100],cpu01`, as Slurm reads them), `!` negation. All are
// compiled to one automaton run without backtracking (nfa.ts): a match takes time linear in the name whatever
// the pattern, because it runs synchronously in every Prolog, where the run's deadline is asked only between patterns.
import { ANY, CharSet, DOT, NONE } from './charset.js';
import { rangeNode, RANGE_RE } from './hostlist.js';
import { Nfa, type Node } from './nfa.js';
import { classRange, parseRegex } from './regex.js';
import { NODE_NAME_MAX } from '../slurm/node-name.js';

/** Longest pattern accepted (as schemas/baseline.schema.json says). */
export const MAX_PATTERN_CHARS = 256;

export interface HostPattern {
  readonly source: string;
  readonly negated: boolean;
  /** False for a name over NODE_NAME_MAX characters: such a name matches no pattern. */
  test(host: string): boolean;
  /** The automaton's states, and the states the last test() visited: its work, whatever the machine's speed. */
  readonly states: number;
  steps(): number;
}

/** `[abc]`, `[!abc]` (or `[^abc]`), `[a-z]` of a glob: characters as they are, backslash included. */
function globClass(inner: string, fail: (why: string) => never): CharSet {
  const negated = inner.startsWith('!') || inner.startsWith('^');
  const body = negated ? inner.slice(1) : inner;
  const parts: CharSet[] = [];
  for (let i = 0; i < body.length; i++) {
    if (body[i + 1] === '-' && i + 2 < body.length) {
      parts.push(classRange(CharSet.of(body[i]!), CharSet.of(body[i + 2]!), fail));
      i += 2;
    } else parts.push(CharSet.of(body[i]!));
  }
  const set = parts.length ? CharSet.union(parts) : NONE;
  return negated ? (parts.length ? set.complement() : ANY) : set;
}

/** A glob covers the whole name. */
function globNode(body: string, fail: (why: string) => never): Node {
  const xs: Node[] = [{ k: 'assert', at: 'start' }];
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '*') xs.push({ k: 'rep', x: { k: 'set', set: DOT }, min: 0, max: null });
    else if (c === '?') xs.push({ k: 'set', set: DOT });
    else if (c === '[') {
      const end = body.indexOf(']', i);
      if (end < 0) fail('unclosed [');
      const inner = body.slice(i + 1, end);
      if (inner === '' || inner === '!' || inner === '^') fail('empty []');
      if (!RANGE_RE.test(inner)) {
        // Digits, dashes and commas that make no range (gpu[1-], gpu[-1], gpu[1,,2], gpu[-]): a class of characters
        // would match gpu- as well; scontrol reads gpu[1-] as gpu1 and refuses the others. A range mistyped: refused.
        if (/^[\d,-]+$/.test(inner)) fail(`[${inner.slice(0, 20)}] is not a Slurm range (each part a number, or two joined by one '-': as gpu[1-8,10-16]); a class of digits and '-' is written as a /regex/`);
        // Digits with a comma, a blank or a sign (in no node name): a Slurm range written another way (gpu[1-8, 10-16]),
        // which as a class of characters would match gpu1 but never gpu10, and put "gpu " in the class. (node[a,c]
        // stays a class: a, c and a comma no name holds.)
        if (/\d/.test(inner) && /[,\s+]/.test(inner)) fail(`[${inner.slice(0, 20)}] is neither a Slurm range (digits, '-' and ',', no blank or sign: as gpu[1-8,10-16]) nor a class of characters a node name may hold`);
      }
      xs.push(RANGE_RE.test(inner) ? rangeNode(inner, fail) : { k: 'set', set: globClass(inner, fail) });
      i = end;
    } else xs.push({ k: 'set', set: CharSet.of(c) });
  }
  xs.push({ k: 'assert', at: 'end' });
  return { k: 'cat', xs };
}

/**
 * A Slurm hostlist's commas, spaces and tabs outside brackets (`gpu[01-04],cpu01`, `gpu[01-04] cpu01`, as the real
 * `scontrol show hostnames` lists them) separate names: the pattern matches a name that one of them matches. Inside
 * brackets a comma belongs to the bracket. (A newline is no separator there: scontrol takes `a[1-2]\nb[5-6]` for one
 * name, a cross product; no host name holds one, so such a pattern matches nothing.)
 */
function globList(body: string, fail: (why: string) => never): Node {
  const items: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '[') depth = 1;
    else if (body[i] === ']') depth = 0;
    else if ((body[i] === ',' || body[i] === ' ' || body[i] === '\t') && depth === 0) {
      items.push(body.slice(from, i));
      from = i + 1;
    }
  }
  items.push(body.slice(from));
  if (items.length === 1) return globNode(body, fail);
  // Empty names are dropped, as `scontrol show hostnames 'gpu1,,gpu2,'` drops them; none left is no pattern.
  const names = items.filter((x) => x !== '');
  if (!names.length) fail('no name in a comma-separated list');
  return { k: 'alt', xs: names.map((x) => globNode(x, fail)) };
}

/** Throws Error with a message naming the pattern when it cannot be compiled (baseline load and validate). */
export function compilePattern(source: string): HostPattern {
  const name = JSON.stringify(source.length > 80 ? `${source.slice(0, 77)}...` : source);
  if (source.length > MAX_PATTERN_CHARS) throw new Error(`host pattern ${name} has ${source.length} characters (at most ${MAX_PATTERN_CHARS})`);
  const negated = source.startsWith('!');
  const body = negated ? source.slice(1) : source;
  if (body === '') throw new Error(`empty host pattern ${name}`);
  const isRegex = body.length > 2 && body.startsWith('/') && body.endsWith('/');
  const fail = (why: string): never => {
    throw new Error(isRegex ? `invalid regex in host pattern ${name}: ${why}` : `${why} in host pattern ${name}`);
  };
  let nfa: Nfa;
  try {
    nfa = new Nfa(isRegex ? parseRegex(body.slice(1, -1)) : globList(body, fail));
  } catch (e) {
    const why = (e as Error).message;
    if (why.includes(name)) throw e;
    return fail(why);
  }
  return { source, negated, test: (h) => h.length <= NODE_NAME_MAX && nfa.test(h), states: nfa.size, steps: () => nfa.steps };
}

/**
 * A host matches a list when some positive pattern matches and no negated one does. `before` runs ahead of each
 * pattern's test (the run's deadline: one match is bounded, a file of them is not short).
 */
export function matchesAll(patterns: readonly HostPattern[], host: string, before: () => void = () => {}): boolean {
  const test = (p: HostPattern): boolean => (before(), p.test(host));
  return patterns.some((p) => !p.negated && test(p)) && !patterns.some((p) => p.negated && test(p));
}
