// Slurm's configuration file syntax as its own parser reads it (src/common/parse_config.c: _get_next_line,
// _strip_comments, _strip_continuation, _strip_escapes, keyvalue_pattern), for slurm.conf (slurm/conf-parse.ts) and
// gres.conf (parsers/gres-conf.ts). Pure.
import type { Parsed } from './sysfs.js';

/**
 * Slurm's keyvalue_pattern: key, optional operator, `=`, a "quoted" or bare value, then space or end. Its blanks are
 * POSIX [[:space:]] in the C locale: a no-break space (a wiki's copy) is part of a value, as slurmd reads it.
 */
export const KEY_VALUE = /^[ \t\n\v\f\r]*([A-Za-z0-9_.]+)[ \t\n\v\f\r]*([-*+/]?)=[ \t\n\v\f\r]*(?:"([^"]*)"|([^ \t\n\v\f\r]+))(?:[ \t\n\v\f\r]|$)/;
/** Nothing but [[:space:]] left. */
/** An Include line (parse_config.c _parse_include_directive: `include`, any case, at the line's start, then blanks and a name). */
export const INCLUDE_LINE = /^include\s+(\S+)/i;
export const blank = (s: string): boolean => /^[ \t\n\v\f\r]*$/.test(s);

/** Everything from the first `#` not escaped by an odd number of backslashes is a comment. */
function stripComment(line: string): string {
  let bs = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '#' && bs % 2 === 0) return line.slice(0, i);
    bs = c === '\\' ? bs + 1 : 0;
  }
  return line;
}

const SPACE = ' \t\n\v\f\r';
/**
 * An odd run of backslashes at the end (trailing spaces aside) continues the line: the text before it, or null. Counted
 * back from the end: the unanchored /(\\+)\s*$/ this was tried every start in a run of backslashes that ends before
 * the line does, in time quadratic in the run (a 256 KiB gres.conf line of them: minutes, past a Prolog's deadline).
 */
function continued(line: string): string | null {
  let end = line.length;
  while (end > 0 && SPACE.includes(line[end - 1]!)) end--;
  let start = end;
  while (start > 0 && line[start - 1] === '\\') start--;
  if ((end - start) % 2 === 0) return null;
  return line.slice(0, end - 1);
}

/** `\x` is `x`; `\\` is one backslash. */
const unescape = (s: string): string => s.replace(/\\(.?)/g, '$1');

/**
 * The lines Slurm reads: comments cut, a line ending in an odd number of backslashes joined to the next one where the
 * last backslash stood, then escapes removed. `line`: the first physical line's number (1-based). Blank ones included.
 */
export function logicalLines(text: string): { readonly line: number; readonly body: string }[] {
  const out: { line: number; body: string }[] = [];
  const physical = text.split('\n');
  for (let i = 0; i < physical.length; i++) {
    const first = i + 1;
    let logical = '';
    for (;;) {
      const stripped = stripComment((physical[i] ?? '').replace(/\r$/, ''));
      const head = continued(stripped);
      if (head === null || i + 1 >= physical.length) {
        logical += head ?? stripped;
        break;
      }
      logical += head;
      i++;
    }
    out.push({ line: first, body: unescape(logical) });
  }
  return out;
}

/** The `Key=Value` pairs of a logical line, values unquoted; a pair with an operator (`+=`) is refused. */
export function keyValues(body: string): Parsed<[string, string][]> {
  const pairs: [string, string][] = [];
  let rest = body;
  while (!blank(rest)) {
    const m = KEY_VALUE.exec(rest);
    if (!m || m[2]) return { ok: false, error: `${JSON.stringify(rest.trim().slice(0, 40))} is not Key=Value` };
    pairs.push([m[1]!, m[3] ?? m[4]!]);
    rest = rest.slice(m[0].length);
  }
  return { ok: true, value: pairs };
}
