// What the TaskProlog found in jobs, counted for the admin: one appended line per finding in the spool directory
// (O_APPEND, whole lines, as the sample spool), counted per code when the metrics textfile is written.
import fs from 'node:fs';
import path from 'node:path';

export const TASK_FINDINGS_FILE = 'task-findings.jsonl';
/** Only the newest part is counted: a bounded read, whatever the file has grown to. */
const MAX_READ = 4 * 1024 * 1024;

export function recordTaskFindings(spoolDir: string, job: string, codes: readonly string[], now = Date.now()): void {
  if (codes.length === 0) return;
  fs.mkdirSync(spoolDir, { recursive: true, mode: 0o755 });
  const lines = codes.map((code) => JSON.stringify({ ts: now, job, code: code.replace(/[^a-z0-9-]/g, '') }) + '\n').join('');
  const fd = fs.openSync(path.join(spoolDir, TASK_FINDINGS_FILE), fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o644);
  try {
    fs.writeSync(fd, lines);
  } finally {
    fs.closeSync(fd);
  }
}

/** code → number of jobs' findings; torn or foreign lines are skipped. */
export function countTaskFindings(spoolDir: string): Record<string, number> {
  const file = path.join(spoolDir, TASK_FINDINGS_FILE);
  let text: string;
  try {
    const size = fs.statSync(file).size;
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const len = Math.min(size, MAX_READ);
      const buf = Buffer.alloc(len);
      fs.readSync(fd, buf, 0, len, size - len);
      text = buf.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return {};
  }
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    try {
      const code = (JSON.parse(line) as { code?: unknown }).code;
      if (typeof code === 'string' && /^[a-z0-9-]{1,64}$/.test(code)) out[code] = (out[code] ?? 0) + 1;
    } catch {
      /* a torn first or last line */
    }
  }
  return out;
}
