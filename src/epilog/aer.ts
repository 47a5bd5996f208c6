// The Epilog's half of pcie-aer: the same check, judging correctable growth during the job against the counters the
// job's Prolog recorded (state/aer.ts), or a newer run's, under the gate's deadline. Only when that record is there: without it (a
// Prolog by hand, a gate upgraded mid-job) nothing is read and nothing is said but the log's why. The counters read
// here then replace the last Prolog's as the next Prolog's reference, so a burst during a job is judged once.
import { trustedFiles, type Config } from '../config.js';
import { evaluateNode } from '../engine/evaluate.js';
import type { Finding } from '../model/finding.js';
import { Deadline, withDeadline } from '../runner/deadline.js';
import { newerReference, readLastAer, takeJobAer } from '../state/aer.js';
import { pruneJobAer, writeAer } from '../state/aer-write.js';
import { aerReferenceOf } from '../checks/aer-judge.js';

export type EpilogAer =
  | { readonly judged: false; readonly why: string }
  | { readonly judged: true; readonly findings: readonly Finding[]; readonly failing: readonly Finding[] };

export async function epilogAer(cfg: Config, node: string, job: string): Promise<EpilogAer> {
  const own = takeJobAer(cfg.stateDir, job);
  pruneJobAer(cfg.stateDir);
  if (own.ref === null) return { judged: false, why: own.why };
  // A run that judged the node since the job's Prolog (a health check, another job's Prolog) moved the reference.
  const history = newerReference(own, readLastAer(cfg.stateDir));
  const deadline = new Deadline(cfg.deadlineMs);
  const read = new Date();
  const ev = await withDeadline(
    evaluateNode({ root: cfg.root, baseline: cfg.baseline, node, trust: trustedFiles(cfg), pidFiles: cfg.slurmdPidFiles, gresConf: cfg.gresConf, checks: ['pcie-aer'], deadline, aerHistory: history }),
    deadline,
  );
  // The node's newest counters become the next Prolog's reference: growth during this job is judged here, once.
  writeAer(cfg.stateDir, aerReferenceOf(ev.inv, read, null));
  const findings = ev.findings.filter((f) => f.status !== 'pass' && f.status !== 'skip');
  return { judged: true, findings, failing: findings.filter((f) => f.status === 'fail') };
}
