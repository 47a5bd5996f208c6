// Renders a report as the table an admin reads during an incident.
import type { Report } from './report.js';
import { escapeControls } from './escape.js';

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

export function renderText(r: Report, opts: { verbose?: boolean } = {}): string {
  const lines: string[] = [];
  const base = r.baseline ? `baseline ${r.baseline.file} class ${r.baseline.class}` : 'no baseline (universal rules only)';
  lines.push(`gdrgate ${r.command} — root ${r.root}${r.host ? `, host ${r.host}` : ''}, ${base}`);
  const wc = Math.max(5, ...r.findings.map((f) => f.check.length));
  const ws = Math.max(7, ...r.findings.map((f) => f.subject.length));
  lines.push(`${pad('STATUS', 6)}  ${pad('CHECK', wc)}  ${pad('SUBJECT', ws)}  FINDING`);
  for (const f of r.findings) {
    const ev = f.expected !== undefined && f.status !== 'pass' ? ` (want ${f.expected})` : '';
    lines.push(`${pad(f.status.toUpperCase(), 6)}  ${pad(f.check, wc)}  ${pad(f.subject, ws)}  ${f.message}${ev}`);
    if (f.status === 'fail' || f.status === 'warn' || f.status === 'error' || opts.verbose) {
      const ind = ' '.repeat(6 + 2 + wc + 2 + ws + 2);
      if (f.tells) lines.push(`${ind}tells: ${f.tells}`);
      if (f.response && f.response !== 'None.') lines.push(`${ind}do:    ${f.response} [${f.layer}${f.owner ? `: ${f.owner}` : ''}]`);
    }
  }
  const s = r.summary;
  lines.push(`result: ${r.result} (exit ${r.exitCode}) — ${s.fail} fail, ${s.error} error, ${s.warn} warn, ${s.pass} pass, ${s.skip} skip`);
  if (r.notes.length && opts.verbose) for (const n of r.notes) lines.push(`note: ${n}`);
  return lines.map(escapeControls).join('\n') + '\n';
}
