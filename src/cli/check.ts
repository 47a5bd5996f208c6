// `gdrgate check`: run the checks by hand and print the report; never drains unless --drain.
import { loadBaselineFor } from '../baseline/load.js';
import { buildReport } from '../report/report.js';
import { renderText } from '../report/text.js';
import { decide, outcomeOf } from '../runner/policy.js';
import { runChecks, selectChecks, sortFindings } from '../runner/run.js';
import { gather, out } from './common.js';

export interface CheckArgs {
  readonly root: string;
  readonly baseline?: string | undefined;
  readonly node?: string | undefined;
  readonly only?: string[] | undefined;
  readonly json: boolean;
  readonly verbose: boolean;
}

export async function checkCommand(a: CheckArgs): Promise<number> {
  const started = performance.now();
  const ids = selectChecks(a.only?.flatMap((s) => s.split(',')).filter(Boolean));
  const { inv } = await gather(a.root);
  const node = a.node ?? process.env.SLURMD_NODENAME ?? inv.hostname ?? '';
  const sel = a.baseline ? await loadBaselineFor(a.baseline, node) : null;
  const findings = sortFindings(runChecks({ inv, baseline: sel?.cls ?? null }, ids));
  const outcome = outcomeOf(findings);
  const decision = decide('check', outcome, { onConfigError: 'open', onInternalError: 'open', drain: false });
  const report = buildReport({
    command: 'check',
    inv,
    root: a.root,
    findings,
    outcome,
    decision,
    started,
    baseline: sel ? { file: a.baseline!, class: sel.cls.name } : null,
    ownership: sel?.baseline.ownership,
  });
  out(a.json ? JSON.stringify(report, null, 2) : renderText(report, { verbose: a.verbose }));
  return decision.exitCode;
}
