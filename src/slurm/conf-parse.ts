// slurm.conf text → its key=value entries and Include lines, as Slurm's own parser reads them (src/common/parse_config.c:
// _get_next_line, _strip_comments, _strip_continuation, _strip_escapes, keyvalue_pattern, _parse_include_directive).
// Pure: the loader (conf-load.ts) reads the files and follows the Include lines.

export interface ConfEntry {
  /** The file it was read from, and its first physical line (1-based). */
  readonly file: string;
  readonly line: number;
  /** The key as written (`prologflags`), and lowercased: Slurm looks keys up case-insensitively. */
  readonly key: string;
  readonly name: string;
  /** Unquoted, escapes removed. */
  readonly value: string;
  /** `+=`, `-=`, `*=`, `/=`: Slurm's operators (meaningful for a few keys only); '' for a plain `=`. */
  readonly op: '' | '+' | '-' | '*' | '/';
}

export interface ConfInclude {
  readonly file: string;
  readonly line: number;
  /** The file name as written, `%c` not yet replaced. */
  readonly target: string;
}

export interface ParsedConf {
  /** Entries and includes in file order; `order` interleaves them as they appear. */
  readonly order: readonly ({ readonly kind: 'entry'; readonly entry: ConfEntry } | { readonly kind: 'include'; readonly include: ConfInclude })[];
  /** Lines Slurm would refuse, in words (`FILE:LINE: ...`). */
  readonly problems: readonly string[];
}

/** Slurm's keyvalue_pattern: key, optional operator, `=`, a "quoted" or bare value, then space or end. */
const KEY_VALUE = /^\s*([A-Za-z0-9_.]+)\s*([-*+/]?)=\s*(?:"([^"]*)"|(\S+))(?:\s|$)/;

/** Keys whose handler takes the rest of the line (`NodeName=a CPUs=4 ...`): one entry, the rest is its value. */
const LINE_KEYS = new Set(['nodename', 'partitionname', 'nodeset', 'frontendname', 'downnodes']);

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

/** An odd run of backslashes at the end (trailing spaces aside) continues the line: the text before it, or null. */
function continued(line: string): string | null {
  const m = /(\\+)\s*$/.exec(line);
  if (!m || m[1]!.length % 2 === 0) return null;
  return line.slice(0, m.index + m[1]!.length - 1);
}

/** `\x` is `x`; `\\` is one backslash. */
const unescape = (s: string): string => s.replace(/\\(.?)/g, '$1');

export function parseConf(text: string, file: string): ParsedConf {
  const order: ParsedConf['order'][number][] = [];
  const problems: string[] = [];
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
    const line = unescape(logical);
    if (line.trim() === '') continue;
    const inc = /^include\s+(\S+)/i.exec(line);
    if (inc) {
      order.push({ kind: 'include', include: { file, line: first, target: inc[1]! } });
      continue;
    }
    let rest = line;
    while (rest.trim() !== '') {
      const m = KEY_VALUE.exec(rest);
      if (!m) {
        problems.push(`${file}:${first}: not key=value: ${JSON.stringify(rest.trim().slice(0, 80))}`);
        break;
      }
      const key = m[1]!;
      const name = key.toLowerCase();
      if (LINE_KEYS.has(name)) {
        const value = rest.slice(rest.indexOf('=') + 1).trim();
        order.push({ kind: 'entry', entry: { file, line: first, key, name, value, op: '' } });
        break;
      }
      order.push({ kind: 'entry', entry: { file, line: first, key, name, value: m[3] ?? m[4]!, op: m[2] as ConfEntry['op'] } });
      rest = rest.slice(m[0].length);
    }
  }
  return { order, problems };
}
