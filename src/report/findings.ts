// The one renderer of findings, whatever their source (node check, job view, probe): the wording comes from the one
// catalog (checks/catalog.ts), the layout from where it is read. `table`: the report an admin or a user reads
// (gdrgate check, a failing prolog or health, task --standalone); `list`: the Epilog's probe findings in slurmd's
// log; `line`: the TaskProlog's `print` lines, one sentence each.
import { entry, type AnyCode } from '../checks/catalog.js';
import type { Layer, Status } from '../model/finding.js';

/** What a row shows of a finding. */
export interface Row {
  readonly check: string;
  readonly code: string;
  readonly status: Status;
  readonly subject: string;
  readonly message: string;
  readonly expected?: string;
}

/** A row with its wording (a report carries it already, with the site's owner of the layer). */
export interface WordedRow extends Row {
  readonly tells: string;
  readonly do: string;
  readonly layer: Layer;
  readonly owner?: string | undefined;
}

/** Statuses whose wording a reader needs (a pass or a skip says nothing to do). */
export const SHOWN: ReadonlySet<Status> = new Set(['fail', 'warn', 'error']);

/** `do` that says there is nothing to do: a table leaves it out. */
export function nothingToDo(d: string): boolean {
  return d === 'None.' || d === 'none';
}

/** A row worded from the catalog. */
export function worded(f: Row): WordedRow {
  const e = entry(f.code as AnyCode);
  return { ...f, tells: e.tells, do: e.do, layer: e.layer };
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

/** STATUS CHECK SUBJECT FINDING, and under a row worth attention (or every row, verbose) what it tells and what to do. */
export function tableLines(rows: readonly WordedRow[], verbose = false): string[] {
  const wc = Math.max(5, ...rows.map((f) => f.check.length));
  const ws = Math.max(7, ...rows.map((f) => f.subject.length));
  const lines = [`${pad('STATUS', 6)}  ${pad('CHECK', wc)}  ${pad('SUBJECT', ws)}  FINDING`];
  const ind = ' '.repeat(6 + 2 + wc + 2 + ws + 2);
  for (const f of rows) {
    const ev = f.expected !== undefined && f.status !== 'pass' ? ` (want ${f.expected})` : '';
    lines.push(`${pad(f.status.toUpperCase(), 6)}  ${pad(f.check, wc)}  ${pad(f.subject, ws)}  ${f.message}${ev}`);
    if (SHOWN.has(f.status) || verbose) {
      if (f.tells) lines.push(`${ind}tells: ${f.tells}`);
      if (f.do && !nothingToDo(f.do)) lines.push(`${ind}do:    ${f.do} [${f.layer}${f.owner ? `: ${f.owner}` : ''}]`);
    }
  }
  return lines;
}

const TAG: Readonly<Record<Status, string>> = { pass: 'PASS', warn: 'WARN', fail: 'FAIL', skip: 'SKIP', error: 'ERR ' };

/** One line per finding; what it tells and what to do under each one worth attention. */
export function listLines(rows: readonly Row[]): string[] {
  return rows.flatMap((r) => {
    const f = worded(r);
    return [`${TAG[f.status]} ${f.code} ${f.subject}: ${f.message}`, ...(SHOWN.has(f.status) ? [`     ${f.tells}`, `     -> ${f.do} [${f.layer}]`] : [])];
  });
}

/** One sentence: the finding's message (with the need, for a limit), what it means, what to do. */
export function sentence(r: Row): string {
  const f = worded(r);
  const need = f.expected !== undefined && f.status !== 'pass' && f.check === 'memlock-limit' ? ` (need ${f.expected})` : '';
  return `gdrgate: ${f.message}${need}: ${f.tells}${nothingToDo(f.do) ? '' : `; ${f.do}`}`;
}
