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

/** A glob's last part (`*.conf`) as a regular expression; the directory part must have none. */
function globPart(p: string): RegExp {
  return new RegExp(`^${p.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')}$`);
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
      const re = globPart(base);
      for (const n of names.value.filter((x) => re.test(x) && !x.startsWith('.')).sort()) {
        const found = await visit(path.posix.join(dir, n), depth + 1);
        if (found) return found;
      }
    }
    return null;
  };
  const at = await visit(plugstack, 0);
  return { at, problems };
}
