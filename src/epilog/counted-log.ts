// A log the metrics count: whole JSON lines appended (O_APPEND) to a file in the spool directory, read back as a
// bounded tail when the textfile is written. Only MAX_READ is ever counted, so the live file never grows past it: it is
// set aside *before* an append would take it over, then every line written is counted until that rotation and each
// counter only rises (a line pushed out of a tail read would make it fall: a false reset to Prometheus). The rotation
// starts the counts again, one counter reset; a node keeps at most twice MAX_READ. spoolDir is root's (ensureSafeDir).
import path from 'node:path';
import { rename } from '../host/entries.js';
import { appendText, ensureSafeDir, lstatOrNull, quietly, readSmall } from '../host/files.js';

/** Only the newest part is counted: a bounded read, whatever the file has grown to. */
export const MAX_READ = 4 * 1024 * 1024;

/** `live` (e.g. task-findings.jsonl) and where it goes when full (task-findings.1.jsonl). */
export interface CountedLog {
  readonly live: string;
  readonly old: string;
}

export function appendCounted(spoolDir: string, log: CountedLog, lines: readonly unknown[]): void {
  if (lines.length === 0) return;
  ensureSafeDir(spoolDir, 0o755);
  const file = path.join(spoolDir, log.live);
  const text = lines.map((l) => JSON.stringify(l) + '\n').join('');
  const size = lstatOrNull(file)?.size ?? 0;
  if (size > 0 && size + Buffer.byteLength(text) > MAX_READ) quietly(() => rename(file, path.join(spoolDir, log.old)));
  // A last line a crash or a full disk cut is ended first: appended to, it would take this run's first line with it
  // (one unparsable line where two were, so the count lost is a new one). Two writers may both end it: a blank line.
  const tail = readSmall(file, { max: 1, tail: true });
  appendText(file, tail.ok && tail.value.length === 1 && tail.value[0] !== 0x0a ? `\n${text}` : text);
}

/** Each whole line of the live file parsed as JSON, oldest first; a torn or unparsable line is skipped. */
export function readCounted(spoolDir: string, log: CountedLog): unknown[] {
  const r = readSmall(path.join(spoolDir, log.live), { max: MAX_READ, tail: true });
  if (!r.ok) return [];
  const out: unknown[] = [];
  for (const line of r.value.toString('utf8').split('\n')) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as unknown);
    } catch {
      /* a torn first or last line */
    }
  }
  return out;
}
