// Renders the job-view findings: TaskProlog protocol lines for the job's output, a text report for a human,
// (its exit code: runner/exit.ts taskResult).
import type { Status } from '../model/finding.js';
import { taskEntry } from './catalog.js';
import type { TaskFinding } from './finding.js';

/** Slurm reads TaskProlog stdout line by line: "print ..." reaches the job's output, "export/unset" change its env. */
const MAX_LINE = 1000;
const SHOWN: ReadonlySet<Status> = new Set(['fail', 'warn', 'error']);

/** One line, printable, bounded: nothing from a device name or a file can start another protocol line. */
export function oneLine(s: string): string {
  const t = s.replace(/[\x00-\x1f\x7f]+/g, ' ').trim();
  return t.length > MAX_LINE ? t.slice(0, MAX_LINE - 1) + '…' : t;
}

export function sentence(f: TaskFinding): string {
  const e = taskEntry(f.code);
  const need = f.expected !== undefined && f.status !== 'pass' && f.check === 'memlock-limit' ? ` (need ${f.expected})` : '';
  return `gdrgate: ${f.message}${need}: ${e.tells}${e.remedy !== 'none' ? `; ${e.remedy}` : ''}`;
}

/** The TaskProlog's whole stdout: one `print` line per finding worth the user's attention, nothing else. */
export function taskPrologLines(findings: readonly TaskFinding[]): string[] {
  return findings.filter((f) => SHOWN.has(f.status)).map((f) => `print ${oneLine(sentence(f))}`);
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

export interface StandaloneMeta {
  readonly root: string;
  readonly host: string | null;
  readonly min: { readonly value: string; readonly from: string };
}

/** The report a person reads inside a container (the layout of `gdrgate check`). */
export function renderStandalone(findings: readonly TaskFinding[], m: StandaloneMeta, exitCode: number): string {
  const lines = [`gdrgate task --standalone — root ${m.root}${m.host ? `, host ${m.host}` : ''}, memlock minimum ${m.min.value} (${m.min.from})`];
  const wc = Math.max(5, ...findings.map((f) => f.check.length));
  const ws = Math.max(7, ...findings.map((f) => f.subject.length));
  lines.push(`${pad('STATUS', 6)}  ${pad('CHECK', wc)}  ${pad('SUBJECT', ws)}  FINDING`);
  const ind = ' '.repeat(6 + 2 + wc + 2 + ws + 2);
  for (const f of findings) {
    const ev = f.expected !== undefined && f.status !== 'pass' ? ` (want ${f.expected})` : '';
    lines.push(`${pad(f.status.toUpperCase(), 6)}  ${pad(f.check, wc)}  ${pad(f.subject, ws)}  ${oneLine(f.message)}${ev}`);
    if (SHOWN.has(f.status)) {
      const e = taskEntry(f.code);
      lines.push(`${ind}tells: ${e.tells}`);
      if (e.remedy !== 'none') lines.push(`${ind}do:    ${e.remedy} [${e.layer}]`);
    }
  }
  const n = (s: Status): number => findings.filter((f) => f.status === s).length;
  lines.push(`result: ${exitCode ? 'problems found' : 'ok'} (exit ${exitCode}) — ${n('fail')} fail, ${n('error')} error, ${n('warn')} warn, ${n('pass')} pass, ${n('skip')} skip`);
  return lines.join('\n') + '\n';
}
