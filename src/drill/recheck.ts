// Resume as `gdrgate resume` does (re-check without every drill overlay, then only a drain we own), for drill run/stop.
import { trustedFiles, type Config } from '../config.js';
import { evaluateNode } from '../engine/evaluate.js';
import type { Exec } from '../host/exec.js';
import { selectChecks } from '../runner/run.js';
import type { Finding } from '../model/finding.js';
import { resumeOwned, type Resumed } from '../slurm/drain.js';
import { notToldNow } from '../slurm/ownership.js';
import { Scontrol } from '../slurm/scontrol.js';
import { hasMarker } from './marker.js';

export type { Resumed };

/** Resumes `node` only if its reason is ours and carries a drill marker (`marker`: that drill's) and the checks pass. */
export async function resumeDrillDrain(cfg: Config, exec: Exec, node: string, marker?: string): Promise<Resumed> {
  const scontrol = new Scontrol(exec, { path: cfg.scontrol, timeoutMs: cfg.scontrolTimeoutMs });
  const refuse = (reason: string | null): string | null =>
    hasMarker(reason, marker) ? null : `drained for a reason without ${marker ? `drill=${marker}` : 'a drill marker'} (${reason ?? 'none'}): left drained`;
  let findings: readonly Finding[] = [];
  const recheck = async () => {
    const ev = await evaluateNode({ root: cfg.root, baseline: cfg.baseline, node, trust: trustedFiles(cfg), pidFiles: cfg.slurmdPidFiles, gresConf: cfg.gresConf, env: process.env, checks: selectChecks(cfg.checks) });
    findings = ev.findings;
    return ev.outcome;
  };
  return resumeOwned(scontrol, node, { refuse, recheck, untold: (reason) => notToldNow(reason, findings), stateDir: cfg.stateDir });
}
