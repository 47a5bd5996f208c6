// The compare result as JSON (schemas/compare.schema.json) and as the table an engineer pastes into a ticket.
import { VERSION } from '../version.js';
import type { Difference, Impact } from './types.js';
import { escapeControls } from '../report/escape.js';

export interface Side {
  readonly source: string;
  readonly kind: 'snapshot' | 'directory' | 'baseline';
  readonly host: string | null;
  /** With a baseline: the class A's host name selected. */
  readonly class?: string;
}

export interface CompareResult {
  readonly tool: 'gdrgate';
  readonly command: 'compare';
  readonly version: string;
  readonly a: Side;
  readonly b: Side;
  readonly equivalent: boolean;
  readonly exitCode: 0 | 1;
  readonly summary: Readonly<Record<Impact, number>>;
  readonly differences: readonly Difference[];
}

export function buildResult(a: Side, b: Side, differences: readonly Difference[]): CompareResult {
  const summary: Record<Impact, number> = { critical: 0, major: 0, minor: 0 };
  for (const d of differences) summary[d.impact]++;
  const equivalent = differences.length === 0;
  return { tool: 'gdrgate', command: 'compare', version: VERSION, a, b, equivalent, exitCode: equivalent ? 0 : 1, summary, differences };
}

const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const side = (s: Side): string => `${s.host ?? '?'} (${s.kind} ${s.source}${s.class ? `, class ${s.class}` : ''})`;

/** One row per difference, worst first; each response once, under the first row that needs it. */
export function renderCompare(r: CompareResult): string {
  const lines = [`gdrgate compare — A (suspect) ${side(r.a)} against B (reference) ${side(r.b)}`];
  const ds = r.differences;
  const w = (f: (d: Difference) => string, min: number): number => Math.max(min, ...ds.map((d) => f(d).length));
  const [wi, wa, ws, wA] = [w((d) => d.impact, 6), w((d) => d.area, 4), w((d) => d.subject, 7), w((d) => d.a, 1)];
  if (ds.length) lines.push(`${pad('IMPACT', wi)}  ${pad('AREA', wa)}  ${pad('SUBJECT', ws)}  ${pad('A', wA)}  B`);
  const said = new Set<string>();
  for (const d of ds) {
    lines.push(`${pad(d.impact.toUpperCase(), wi)}  ${pad(d.area, wa)}  ${pad(d.subject, ws)}  ${pad(d.a, wA)}  ${d.b}`);
    if (!said.has(d.response)) lines.push(`${' '.repeat(wi + 2)}do: ${d.response}`);
    said.add(d.response);
  }
  const s = r.summary;
  lines.push(r.equivalent ? 'result: equivalent (exit 0)' : `result: ${ds.length} difference(s): ${s.critical} critical, ${s.major} major, ${s.minor} minor (exit 1)`);
  return lines.map(escapeControls).join('\n') + '\n';
}
