// `gdrgate check`: run the checks by hand and print the report; never drains unless --drain.
import { evaluateNode } from '../engine/evaluate.js';
import { buildReport } from '../report/report.js';
import { renderText } from '../report/text.js';
import { decide } from '../runner/policy.js';
import { selectChecks } from '../runner/run.js';
import { out } from './common.js';

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
  const checks = selectChecks(a.only);
  // The class is chosen by --node, else slurmd's name, else the root's own host name (a capture's).
  const node = a.node || process.env.SLURMD_NODENAME || null;
  // By hand and read-only: nothing is trusted as root, so nothing needs the trust check.
  const ev = await evaluateNode({ root: a.root, baseline: a.baseline ?? null, node, trust: [], checks });
  const decision = decide('check', ev.outcome, { onConfigError: 'open', onInternalError: 'open', drain: false });
  const report = buildReport({
    command: 'check',
    inv: ev.inv,
    root: a.root,
    findings: ev.findings,
    outcome: ev.outcome,
    decision,
    started,
    baseline: ev.baseline ? { file: ev.baseline.file, class: ev.baseline.cls.name } : null,
    ownership: ev.baseline?.doc.ownership,
  });
  out(a.json ? JSON.stringify(report, null, 2) : renderText(report, { verbose: a.verbose }));
  return decision.exitCode;
}
