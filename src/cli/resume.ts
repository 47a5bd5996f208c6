// `gdrgate resume`: re-run the checks and resume the node only if they pass and the drain reason is ours.
import { configPath, loadTrustedConfig, trustedFiles } from '../config.js';
import { evaluateNode } from '../engine/evaluate.js';
import { nodeName } from '../engine/node.js';
import { ExecaExec, type Exec } from '../host/exec.js';
import { requireTrusted } from '../host/trust.js';
import { exitCode } from '../runner/exit.js';
import { selectChecks } from '../runner/run.js';
import { resumeOwned } from '../slurm/drain.js';
import { Scontrol } from '../slurm/scontrol.js';
import { out } from './common.js';

export async function resumeCommand(a: { config?: string | undefined; force: boolean; node?: string | undefined }, exec: Exec = new ExecaExec()): Promise<number> {
  const cfg = await loadTrustedConfig(configPath(a.config));
  const node = nodeName(process.env, a.node);
  // Runs scontrol as root: the same trust as the prolog's, also with --force.
  const trust = trustedFiles(cfg);
  requireTrusted(trust);
  const scontrol = new Scontrol(exec, { path: cfg.scontrol, timeoutMs: cfg.scontrolTimeoutMs });
  // --force skips the re-check; it never overrides a reason that is not ours.
  const recheck = async () => (await evaluateNode({ root: cfg.root, baseline: cfg.baseline, node, trust, pidFiles: cfg.slurmdPidFiles, gresConf: cfg.gresConf, checks: selectChecks(cfg.checks) })).outcome;
  const r = await resumeOwned(scontrol, node, { recheck: a.force ? undefined : recheck });
  out(`${node}: ${r.why}`);
  return exitCode(r.result);
}
