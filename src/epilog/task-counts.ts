// What the TaskProlog found in jobs, counted for the admin: one appended line per finding in the spool directory
// (O_APPEND, whole lines, as the sample spool), counted per code when the metrics textfile is written. The findings
// come from task.json, which the job's own user writes: an unverified report, so only codes the TaskProlog can
// emit are recorded or counted (a job can at most inflate or omit its own counts, never add a series) and nothing
// acts on them.
import path from 'node:path';
import { rename } from '../host/entries.js';
import { appendText, ensureSafeDir, lstatOrNull, quietly, readSmall } from '../host/files.js';
import { isTaskCode } from '../task/records.js';

export const TASK_FINDINGS_FILE = 'task-findings.jsonl';
/** Only the newest part is counted: a bounded read, whatever the file has grown to. */
const MAX_READ = 4 * 1024 * 1024;
/** One job's task.json holds at most 32 findings (src/state/epilog.ts); more lines per job are not the TaskProlog's. */
const MAX_PER_JOB = 32;

const known = (code: unknown): code is string => isTaskCode(code);

/** Where the live file goes before it would pass MAX_READ: replacing the one before, so the two never pass twice MAX_READ. */
export const TASK_FINDINGS_OLD = 'task-findings.1.jsonl';

export function recordTaskFindings(spoolDir: string, job: string, codes: readonly string[], now = Date.now()): void {
  const ours = codes.filter(known).slice(0, MAX_PER_JOB);
  if (ours.length === 0) return;
  ensureSafeDir(spoolDir, 0o755);
  const file = path.join(spoolDir, TASK_FINDINGS_FILE);
  const text = ours.map((code) => JSON.stringify({ ts: now, job, code }) + '\n').join('');
  // Only MAX_READ is ever counted, so the live file never grows past it: set aside *before* this append would take
  // it over, then every line written is counted until the rotation and the counter only rises (a line pushed out of a
  // tail read would make it fall: a false reset to Prometheus). The rotation itself starts the counts again from
  // this job's, one counter reset. A node keeps at most twice MAX_READ. (spoolDir is root's: ensureSafeDir.)
  const size = lstatOrNull(file)?.size ?? 0;
  if (size > 0 && size + Buffer.byteLength(text) > MAX_READ) quietly(() => rename(file, path.join(spoolDir, TASK_FINDINGS_OLD)));
  appendText(file, text);
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
