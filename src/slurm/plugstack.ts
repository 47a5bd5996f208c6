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

/**
 * A glob's last part (`*.conf`) as glob(3) reads it (flags 0, spank.c): `*`, `?`, a bracket expression (`[a-c]`,
 * `[!x]` or `[^x]`, a `]` first in it is itself; one never closed is a plain `[`) and `\` taking the next character
 * as it is. Never a regular expression: a `[` left open made one that did not compile (slurm-config ended on a
 * SyntaxError), and `*a*a…*b` one that backtracked for ever on a long name.
 */
function globItems(p: string): GlobItem[] {
  const items: GlobItem[] = [];
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '*') {
      if (items[items.length - 1] !== '*') items.push('*');
    } else if (c === '?') items.push(() => true);
    else if (c === '[' && p.indexOf(']', i + (p[i + 1] === '!' || p[i + 1] === '^' ? 3 : 2)) > 0) {
      const not = p[i + 1] === '!' || p[i + 1] === '^';
      const end = p.indexOf(']', i + (not ? 3 : 2));
      const body = p.slice(i + (not ? 2 : 1), end);
      const ranges: [string, string][] = [];
      for (let k = 0; k < body.length; k++) ranges.push(body[k + 1] === '-' && k + 2 < body.length ? [body[k]!, body[(k += 2)]!] : [body[k]!, body[k]!]);
      items.push((x) => ranges.some(([a, b]) => a <= x && x <= b) !== not);
      i = end;
    } else {
      const lit = c === '\\' && i + 1 < p.length ? p[++i]! : c;
      items.push((x) => x === lit);
    }
  }
  return items;
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
      const items = globItems(base);
      for (const n of names.value.filter((x) => globMatch(items, x) && !x.startsWith('.')).sort()) {
        const found = await visit(path.posix.join(dir, n), depth + 1);
        if (found) return found;
      }
    }
    return null;
  };
  const at = await visit(plugstack, 0);
  return { at, problems };
}
