// slurm.conf text → its key=value entries and Include lines, as Slurm's own parser reads them (src/common/parse_config.c:
// _get_next_line, _strip_comments, _strip_continuation, _strip_escapes, keyvalue_pattern, _parse_include_directive).
// Pure: the loader (conf-load.ts) reads the files and follows the Include lines.
import { blank, INCLUDE_LINE, KEY_VALUE, logicalLines } from '../parsers/slurm-syntax.js';
import type { WalkItem } from './include-walk.js';

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

export interface ParsedConf {
  /** Entries and includes in file order; `order` interleaves them as they appear. */
  readonly order: readonly WalkItem<ConfEntry>[];
  /** Lines Slurm would refuse, in words (`FILE:LINE: ...`). */
  readonly problems: readonly string[];
}

/** Keys whose handler takes the rest of the line (`NodeName=a CPUs=4 ...`): one entry, the rest is its value. */
const LINE_KEYS = new Set(['nodename', 'partitionname', 'nodeset', 'frontendname', 'downnodes']);

export function parseConf(text: string, file: string): ParsedConf {
  const order: WalkItem<ConfEntry>[] = [];
  const problems: string[] = [];
  for (const { line: first, body: line } of logicalLines(text)) {
    if (blank(line)) continue;
    const inc = INCLUDE_LINE.exec(line);
    if (inc) {
      order.push({ kind: 'include', include: { file, line: first, target: inc[1]! } });
      continue;
    }
    let rest = line;
    while (!blank(rest)) {
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
