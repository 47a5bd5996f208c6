// What the TaskProlog found in jobs, counted for the admin: one appended line per finding in the spool directory
// (O_APPEND, whole lines, as the sample spool), counted per code when the metrics textfile is written. The findings
// come from task.json, which the job's own user writes: an unverified report, so only codes the TaskProlog can
// emit are recorded or counted (a job can at most inflate or omit its own counts, never add a series) and nothing
// acts on them.
import fs from 'node:fs';
import path from 'node:path';
import { appendText, ensureSafeDir, lstatOrNull, quietly, readSmall } from '../host/files.js';
import { isTaskCode } from '../task/records.js';

export const TASK_FINDINGS_FILE = 'task-findings.jsonl';
/** Only the newest part is counted: a bounded read, whatever the file has grown to. */
const MAX_READ = 4 * 1024 * 1024;
/** One job's task.json holds at most 32 findings (src/state/epilog.ts); more lines per job are not the TaskProlog's. */
const MAX_PER_JOB = 32;

const known = (code: unknown): code is string => isTaskCode(code);

/** Where the live file goes once it holds MAX_READ: replacing the one before, so the two never pass twice MAX_READ. */
export const TASK_FINDINGS_OLD = 'task-findings.1.jsonl';

export function recordTaskFindings(spoolDir: string, job: string, codes: readonly string[], now = Date.now()): void {
  const ours = codes.filter(known).slice(0, MAX_PER_JOB);
  if (ours.length === 0) return;
  ensureSafeDir(spoolDir, 0o755);
  const file = path.join(spoolDir, TASK_FINDINGS_FILE);
  // Only the newest MAX_READ is ever counted: beyond it the file would only grow (a node's every job, for years). The
  // counts start again from the new file, a counter's reset to Prometheus. (spoolDir is root's: ensureSafeDir.)
  if ((lstatOrNull(file)?.size ?? 0) >= MAX_READ) quietly(() => fs.renameSync(file, path.join(spoolDir, TASK_FINDINGS_OLD)));
  appendText(file, ours.map((code) => JSON.stringify({ ts: now, job, code }) + '\n').join(''));
}

/** code → number of jobs' findings; torn, foreign or unknown lines are skipped. */
export function countTaskFindings(spoolDir: string): Record<string, number> {
  const r = readSmall(path.join(spoolDir, TASK_FINDINGS_FILE), { max: MAX_READ, tail: true });
  if (!r.ok) return {};
  const out: Record<string, number> = {};
  for (const line of r.value.toString('utf8').split('\n')) {
    try {
      const code = (JSON.parse(line) as { code?: unknown }).code;
      if (known(code)) out[code] = (out[code] ?? 0) + 1;
    } catch {
      /* a torn first or last line */
    }
  }
  return out;
}
