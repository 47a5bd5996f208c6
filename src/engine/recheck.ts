// The re-check of a resume a person asks for (gdrgate resume, the drill's): the node judged again as the gate judges
// it, what was seen kept for the caller, and whether it could tell of the drain's subject (slurm/ownership.ts
// notToldNow): a re-check with no fail but a skip there never resumes, as the health check's does not.
import { trustedFiles, type Config } from '../config.js';
import { selectChecks } from '../runner/run.js';
import type { ResumeOptions } from '../slurm/drain.js';
import { notToldNow } from '../slurm/ownership.js';
import { readLastAer } from '../state/aer.js';
import { evaluateNode, type Evaluation } from './evaluate.js';

export interface NodeRecheck {
  /** resumeOwned's re-check and its "could not tell" refusal. */
  readonly options: Required<Pick<ResumeOptions, 'recheck' | 'untold'>>;
  /** The last re-check's evaluation and when it began reading the node; null before one ran. */
  last(): { readonly ev: Evaluation; readonly read: Date } | null;
}

/** `aer`: judge pcie-aer's growth against the last run's counters, as the gate does (a drill's re-check does not). */
export function nodeRecheck(cfg: Config, node: string, aer: boolean): NodeRecheck {
  let last: { ev: Evaluation; read: Date } | null = null;
  const recheck = async () => {
    const read = new Date();
    const ev = await evaluateNode({ root: cfg.root, baseline: cfg.baseline, node, trust: trustedFiles(cfg), pidFiles: cfg.slurmdPidFiles, gresConf: cfg.gresConf, env: process.env, checks: selectChecks(cfg.checks), ...(aer ? { aerHistory: readLastAer(cfg.stateDir) } : {}) });
    last = { ev, read };
    return ev.outcome;
  };
  return { options: { recheck, untold: (reason) => notToldNow(reason, last?.ev.findings ?? []) }, last: () => last };
}
