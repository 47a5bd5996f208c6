// Renders a report as the table an admin reads during an incident (the one renderer's table, report/findings.ts).
import type { Report } from './report.js';
import { escapeControls } from './escape.js';
import { tableLines } from './findings.js';

export function renderText(r: Report, opts: { verbose?: boolean } = {}): string {
  const lines: string[] = [];
  const base = r.baseline ? `baseline ${r.baseline.file} class ${r.baseline.class}` : 'no baseline (universal rules only)';
  lines.push(`gdrgate ${r.command} — root ${r.root}${r.host ? `, host ${r.host}` : ''}, ${base}`);
  lines.push(...tableLines(r.findings.map((f) => ({ ...f, do: f.response })), opts.verbose));
  const s = r.summary;
  lines.push(`result: ${r.result} (exit ${r.exitCode}) — ${s.fail} fail, ${s.error} error, ${s.warn} warn, ${s.pass} pass, ${s.skip} skip`);
  if (r.notes.length && opts.verbose) for (const n of r.notes) lines.push(`note: ${n}`);
  return lines.map(escapeControls).join('\n') + '\n';
}
