// Which SPANK plugins slurmstepd loads: plugstack.conf (slurm.conf's PlugStackConfig, else plugstack.conf beside the
// slurm.conf read) and every file its `include` lines name, as Slurm reads them (src/common/spank.c: a line is
// `required|optional PLUGIN [ARGS]` or `include GLOB`, `#` starts a comment, a relative glob is taken from the
// including file's directory). Asked for one thing: whether pyxis is among them. Under pyxis a container step's
// TaskProlog runs inside its container (pyxis enters the container's namespaces at task_init, which slurmstepd runs
// before the TaskProlog: task.c), where a script the image lacks cannot run, and slurmstepd then ends the task.
import path from 'node:path';
import type { Host } from '../host/host.js';

export interface SpankLine {
  readonly file: string;
  readonly line: number;
  readonly kind: 'required' | 'optional' | 'include';
  /** The plugin (path or name) or the include's glob. */
  readonly target: string;
}

/**
 * Pure: the plugin and include lines of one plugstack file, split as spank.c splits them (strtok_r on space, tab and
 * newline only): a carriage return stays part of its word, so `required spank_pyxis.so\r` names a file Slurm cannot
 * load, and `optional\r` is no line type at all.
 */
export function parsePlugstack(text: string, file: string): SpankLine[] {
  const out: SpankLine[] = [];
  text.split('\n').forEach((raw, i) => {
    const words = raw.replace(/#.*/, '').split(/[ \t]+/).filter(Boolean);
    const kind = words[0];
    if ((kind === 'required' || kind === 'optional' || kind === 'include') && words[1] !== undefined) out.push({ file, line: i + 1, kind, target: words[1] });
  });
  return out;
}

/** One element of a glob: `*`, or what one character must be. */
type GlobItem = '*' | ((c: string) => boolean);

/** glob(3)'s character classes (`[[:alpha:]]`), as the C locale has them. */
const CLASSES: Readonly<Record<string, RegExp>> = { alnum: /[A-Za-z0-9]/, alpha: /[A-Za-z]/, blank: /[ \t]/, cntrl: /[\x00-\x1f\x7f]/, digit: /[0-9]/, graph: /[!-~]/, lower: /[a-z]/, print: /[ -~]/, punct: /[!-/:-@[-`{-~]/, space: /[ \t\n\v\f\r]/, upper: /[A-Z]/, xdigit: /[0-9A-Fa-f]/ };

/**
 * The bracket expression opening at `p[i]`: what one character must be and where it closes, or null where it never
 * closes (a plain `[`). `!` or `^` first negates; a `]` first is itself; `\` takes the next character as it is; `a-c`
 * is a range; `[:alpha:]` a class (an unknown one matches nothing, as fnmatch answers no match for it).
 */
function bracket(p: string, i: number): { readonly test: (c: string) => boolean; readonly end: number } | null {
  let k = i + 1;
  const not = p[k] === '!' || p[k] === '^';
  if (not) k++;
  const tests: ((c: string) => boolean)[] = [];
  let unknown = false;
  const one = (): string => (p[k] === '\\' && k + 1 < p.length ? p[(k += 2) - 1]! : p[k++]!);
  for (let first = true; k < p.length; first = false) {
    if (p[k] === ']' && !first) return { test: (c) => !unknown && tests.some((f) => f(c)) !== not, end: k };
    const close = p[k] === '[' && p[k + 1] === ':' ? p.indexOf(':]', k + 2) : -1;
    if (close >= 0) {
      const re = CLASSES[p.slice(k + 2, close)];
      if (re) tests.push((c) => re.test(c));
      else unknown = true;
      k = close + 2;
      continue;
    }
    const lo = one();
    const hi = p[k] === '-' && k + 1 < p.length && p[k + 1] !== ']' ? (k++, one()) : lo;
    tests.push((c) => lo <= c && c <= hi);
  }
  return null;
}

/**
 * A glob's last part (`*.conf`) as glob(3) reads it (flags 0, spank.c): `*`, `?`, a bracket expression (bracket())
 * and `\` taking the next character as it is; `dot`: it starts with a `.` of its own, which a name starting with one
 * needs (no GLOB_PERIOD: a leading `.` is matched by no `*`, `?` or bracket). Never a regular expression: a `[` left
 * open made one that did not compile (slurm-config ended on a SyntaxError), and `*a*a…*b` one that backtracked for
 * ever on a long name.
 */
function globItems(p: string): { readonly items: GlobItem[]; readonly dot: boolean } {
  const items: GlobItem[] = [];
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    const b = c === '[' ? bracket(p, i) : null;
    if (c === '*') {
      if (items[items.length - 1] !== '*') items.push('*');
    } else if (c === '?') items.push(() => true);
    else if (b) {
      items.push(b.test);
      i = b.end;
    } else {
      const lit = c === '\\' && i + 1 < p.length ? p[++i]! : c;
      items.push((x) => x === lit);
    }
  }
  return { items, dot: p.startsWith('.') || p.startsWith('\\.') };
}

/** Whether `name` matches: the last `*` is retried one character on at a time, O(name × items) at worst. */
function globMatch(items: readonly GlobItem[], name: string): boolean {
  let i = 0;
  let n = 0;
  let star = -1;
  let from = 0;
  while (n < name.length) {
    const it = items[i];
    if (it === '*') [star, from, i] = [i, n, i + 1];
    else if (it !== undefined && it(name[n]!)) [i, n] = [i + 1, n + 1];
    else if (star >= 0) [i, n, from] = [star + 1, from + 1, from + 1];
    else return false;
  }
  while (items[i] === '*') i++;
  return i === items.length;
}

const MAX_FILES = 64;
const PYXIS_RE = /(^|\/)spank_pyxis\.so$/;

export interface PyxisFound {
  /** The line that loads pyxis, or null. */
  readonly at: { readonly file: string; readonly line: number } | null;
  /** Files that could not be read or globs not followed (then a pyxis line there is not seen). */
  readonly problems: readonly string[];
}

export async function findPyxis(host: Host, plugstack: string): Promise<PyxisFound> {
  const problems: string[] = [];
  if (!plugstack.startsWith('/')) return { at: null, problems: [`PlugStackConfig=${plugstack}: a relative path, which slurmstepd opens from its working directory; not followed (give it whole)`] };
  const seen = new Set<string>();
  const visit = async (file: string, depth: number): Promise<{ file: string; line: number } | null> => {
    if (seen.has(file) || seen.size >= MAX_FILES || depth > 8) return null;
    seen.add(file);
    const r = await host.readText(file);
    if (!r.ok) {
      // A missing plugstack.conf is no error to Slurm: no SPANK plugin at all.
      if (!(r.missing && depth === 0)) problems.push(`${file}: ${r.missing ? 'no such file' : r.reason}`);
      return null;
    }
    for (const l of parsePlugstack(r.value, file)) {
      if (l.kind !== 'include') {
        if (PYXIS_RE.test(l.target)) return { file: l.file, line: l.line };
        continue;
      }
      const pattern = l.target.startsWith('/') ? l.target : path.posix.join(path.posix.dirname(file), l.target);
      const dir = path.posix.dirname(pattern);
      if (/[*?[]/.test(dir)) {
        problems.push(`${file}:${l.line}: include ${l.target}: a glob in a directory name, not followed`);
        continue;
      }
      const base = path.posix.basename(pattern);
      const names = /[*?[]/.test(base) ? await host.list(dir) : { ok: true as const, value: [base] };
      if (!names.ok) {
        if (!names.missing) problems.push(`${file}:${l.line}: include ${l.target}: ${names.reason}`);
        continue;
      }
      const g = globItems(base);
      for (const n of names.value.filter((x) => globMatch(g.items, x) && (g.dot || !x.startsWith('.'))).sort()) {
        const found = await visit(path.posix.join(dir, n), depth + 1);
        if (found) return found;
      }
    }
    return null;
  };
  const at = await visit(plugstack, 0);
  return { at, problems };
}
