// The report object: what `--json` prints (schemas/report.schema.json) and what the text reporter renders.
import { nul } from '../model/fact.js';
import { entry } from '../checks/catalog.js';
import type { Finding, Layer, Status } from '../model/finding.js';
import type { Inventory } from '../model/inventory.js';
import type { Decision, Outcome } from '../runner/policy.js';
import { VERSION } from '../version.js';

export interface ReportFinding extends Finding {
  readonly layer: Layer;
  readonly owner?: string;
  readonly tells: string;
  readonly response: string;
}

export interface Report {
  readonly tool: 'gdrgate';
  readonly version: string;
  readonly command: string;
  readonly root: string;
  readonly host: string | null;
  readonly time: string;
  readonly durationMs: number;
  readonly result: Outcome['kind'];
  readonly exitCode: number;
  readonly baseline: { readonly file: string; readonly class: string } | null;
  readonly summary: Readonly<Record<Status, number>>;
  readonly findings: readonly ReportFinding[];
  readonly notes: readonly string[];
}

export interface ReportInput {
  readonly command: string;
  readonly inv: Inventory | null;
  readonly root: string;
  readonly findings: readonly Finding[];
  readonly outcome: Outcome;
  readonly decision: Decision;
  readonly started: number;
  readonly baseline: { readonly file: string; readonly class: string } | null;
  readonly ownership?: Partial<Readonly<Record<Layer, string>>> | undefined;
}

/** Findings counted by status (the report's summary, and the agent's run line). */
export function summarize(findings: readonly Finding[]): Record<Status, number> {
  const summary: Record<Status, number> = { pass: 0, warn: 0, fail: 0, skip: 0, error: 0 };
  for (const f of findings) summary[f.status]++;
  return summary;
}

export function buildReport(i: ReportInput): Report {
  const summary = summarize(i.findings);
  return {
    tool: 'gdrgate',
    version: VERSION,
    command: i.command,
    root: i.root,
    host: i.inv ? nul(i.inv.hostname) : null,
    time: new Date().toISOString(),
    durationMs: Math.round(performance.now() - i.started),
    result: i.outcome.kind,
    exitCode: i.decision.exitCode,
    baseline: i.baseline,
    summary,
    findings: i.findings.map((f) => {
      const e = entry(f.code);
      const owner = i.ownership?.[e.layer];
      return { ...f, layer: e.layer, ...(owner ? { owner } : {}), tells: e.tells, response: e.do };
    }),
    notes: i.inv?.notes ?? [],
  };
}
