// What the TaskProlog found in jobs, counted for the admin: one appended line per finding in the spool directory
// (src/epilog/counted-log.ts: O_APPEND, whole lines, as the sample spool), counted per code when the metrics textfile is written. The findings
// come from task.json, which the job's own user writes: an unverified report, so only codes the TaskProlog can
// emit are recorded or counted (a job can at most inflate or omit its own counts, never add a series) and nothing
// acts on them.
import { appendCounted, readCounted } from './counted-log.js';
import { isTaskCode } from '../task/records.js';

export const TASK_FINDINGS_FILE = 'task-findings.jsonl';
/** One job's task.json holds at most 32 findings (src/state/epilog.ts); more lines per job are not the TaskProlog's. */
const MAX_PER_JOB = 32;

const known = (code: unknown): code is string => isTaskCode(code);

/** Where the live file goes before it would pass the counted read (src/epilog/counted-log.ts). */
export const TASK_FINDINGS_OLD = 'task-findings.1.jsonl';
const LOG = { live: TASK_FINDINGS_FILE, old: TASK_FINDINGS_OLD };

/** Each line names its node, as the probe runs' do (src/epilog/probe-runs.ts). */
export function recordTaskFindings(spoolDir: string, node: string, job: string, codes: readonly string[], now = Date.now()): void {
  appendCounted(spoolDir, LOG, codes.filter(known).slice(0, MAX_PER_JOB).map((code) => ({ ts: now, node, job, code })));
}

/**
 * code → number of this node's jobs' findings; torn or unknown lines are skipped, and so are another node's (a spool
 * copied from a golden image) and lines that name no node (written before lines named theirs: whose they are is
 * unsaid, as the probe runs' old lines were; the counts start again once, a counter reset).
 */
export function countTaskFindings(spoolDir: string, node: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of readCounted(spoolDir, LOG)) {
    const { code, node: of } = (l ?? {}) as { code?: unknown; node?: unknown };
    if (of === node && known(code)) out[code] = (out[code] ?? 0) + 1;
  }
  return out;
}
