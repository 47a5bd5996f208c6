// The job-view findings through the one renderer (report/findings.ts): TaskProlog protocol lines for the job's
// output, the table for a human (its exit code: runner/exit.ts taskResult).
import type { Status } from '../model/finding.js';
import { sentence, SHOWN, tableLines, worded } from '../report/findings.js';
import type { TaskFinding } from './finding.js';

/** Slurm reads TaskProlog stdout line by line: "print ..." reaches the job's output, "export/unset" change its env. */
const MAX_LINE = 1000;

/** One line, printable, bounded: nothing from a device name or a file can start another protocol line. */
export function oneLine(s: string): string {
  const t = s.replace(/[\x00-\x1f\x7f]+/g, ' ').trim();
  return t.length > MAX_LINE ? t.slice(0, MAX_LINE - 1) + '…' : t;
}

/** The TaskProlog's whole stdout: one `print` line per finding worth the user's attention, nothing else. */
export function taskPrologLines(findings: readonly TaskFinding[]): string[] {
  return findings.filter((f) => SHOWN.has(f.status)).map((f) => `print ${oneLine(sentence(f))}`);
}

export interface StandaloneMeta {
  readonly root: string;
  readonly host: string | null;
  readonly min: { readonly value: string; readonly from: string };
}

/** The report a person reads inside a container (the layout of `gdrgate check`). */
export function renderStandalone(findings: readonly TaskFinding[], m: StandaloneMeta, exitCode: number): string {
  const lines = [`gdrgate task --standalone — root ${m.root}${m.host ? `, host ${m.host}` : ''}, memlock minimum ${m.min.value} (${m.min.from})`];
  lines.push(...tableLines(findings.map((f) => worded({ ...f, message: oneLine(f.message) }))));
  const n = (s: Status): number => findings.filter((f) => f.status === s).length;
  lines.push(`result: ${exitCode ? 'problems found' : 'ok'} (exit ${exitCode}) — ${n('fail')} fail, ${n('error')} error, ${n('warn')} warn, ${n('pass')} pass, ${n('skip')} skip`);
  return lines.join('\n') + '\n';
}
