// The message record of the check tables (not a test): each case's finding messages, kept in
// test/checks/messages/<table file>.json and compared exactly, so that a change of wording shows in review.
//
// Layout: { "<case name>": { "without baseline": [messages], "with baseline": [messages] } }, the messages of the
// findings the case compares (its `subjects`, else every finding that is not a pass) in the order the check gives them.
//
// Updating: after a deliberate change of wording, run the table with the variable set, then read the diff line by line
// (each changed sentence is what an admin reads, and what a drain reason may say) before committing it:
//   GDRGATE_WRITE_MESSAGES=1 npx tap test/checks/<table>.test.ts
// The file is rewritten whole from the table (entries of removed cases go). A normal run never writes: a missing,
// extra or different entry fails. With CI set, the variable is refused.
//
// Normalised: a path under the tree's temporary root (<tmp>/gdrgate-checks-XXXXXX) is written as <root>.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { REPO } from '../helpers/paths.js';

export type Messages = Record<string, Record<'without baseline' | 'with baseline', string[]>>;

export const WRITE = process.env.GDRGATE_WRITE_MESSAGES === '1';
if (WRITE && process.env.CI) throw new Error('GDRGATE_WRITE_MESSAGES is for a deliberate local update, never in CI');

const DIR = path.join(REPO, 'test/checks/messages');

/** The table file that called table(): the record is kept per file, as two files may hold cases of one check. */
export function tableFile(): string {
  const stack = new Error().stack ?? '';
  const m = /test\/checks\/([^/\s:]+)\.test\.[tj]s/.exec(stack);
  if (!m) throw new Error(`no test/checks/<table>.test.ts in the stack of table():\n${stack}`);
  return m[1]!;
}

const recordPath = (file: string): string => path.join(DIR, `${file}.json`);

export function readRecord(file: string): Messages {
  const p = recordPath(file);
  return existsSync(p) ? (JSON.parse(readFileSync(p, 'utf8')) as Messages) : {};
}

/** The tree's temporary root out of a message: a record must read the same on every machine and run. */
const ROOT = /(?:\/[^\s'"`:]*)?\/gdrgate-checks-[A-Za-z0-9]{6}/g;
export const normalise = (m: string): string => m.replace(ROOT, '<root>');

/** Whole file, keys in the table's order, two-space JSON and a final newline: a stable diff. */
export function writeRecord(file: string, rec: Messages): void {
  writeFileSync(recordPath(file), JSON.stringify(rec, null, 2) + '\n');
}

/** Entries of the record with no case of that name in the table: a renamed or removed case leaves none behind. */
export function checkStale(t: Test, file: string, rec: Messages, names: readonly string[]): void {
  const stale = Object.keys(rec).filter((k) => !names.includes(k));
  t.strictSame(stale, [], `test/checks/messages/${file}.json holds no entry without a case`);
}
