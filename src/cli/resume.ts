// `gdrgate resume`: re-run the checks and resume the node only if they pass and the drain reason is ours.
import { configPath, loadTrustedConfig, trustedFiles } from '../config.js';
import { nodeRecheck } from '../engine/recheck.js';
import { nodeName } from '../engine/node.js';
import { ExecaExec, type Exec } from '../host/exec.js';
import { requireTrusted } from '../host/trust.js';
import { log } from '../log.js';
import type { Inventory } from '../model/inventory.js';
import { exitCode } from '../runner/exit.js';
import { resumeOwned } from '../slurm/drain.js';
import { restartWindow } from '../epilog/window.js';
import { Scontrol } from '../slurm/scontrol.js';
import { aerReferenceOf } from '../checks/aer-judge.js';
import { out } from './common.js';

export async function resumeCommand(a: { config?: string | undefined; force: boolean; node?: string | undefined }, exec: Exec = new ExecaExec()): Promise<number> {
  const cfg = await loadTrustedConfig(configPath(a.config));
  const node = nodeName(process.env, a.node);
  // Runs scontrol as root: the same trust as the prolog's, also with --force.
  const trust = trustedFiles(cfg);
  requireTrusted(trust);
  const scontrol = new Scontrol(exec, { path: cfg.scontrol, timeoutMs: cfg.scontrolTimeoutMs });
  // --force skips the re-check; it never overrides a reason that is not ours. The re-check judges pcie-aer's growth
  // against the last run's counters, as the gate would: a link still erroring since the drain is not resumed.
  const again = nodeRecheck(cfg, node, true);
  const r = await resumeOwned(scontrol, node, a.force ? { stateDir: cfg.stateDir } : { ...again.options, stateDir: cfg.stateDir });
  // A resume accepts what the counters say now: the next run judges only the errors after it (docs/limits-and-state.md).
  const seen = again.last();
  if (r.resumed && seen) await recordResumeAer(cfg.stateDir, node, seen.ev.inv, seen.read);
  // A drain of ours lifted: the Epilog judges the paths from here on (what it sampled before was before the repair).
  if (r.resumed && cfg.probes) await restartWindow(cfg.spool, `resumed: ${r.was ?? 'none'}`, node);
  out(`${node}: ${r.why}`);
  return exitCode(r.result);
}

async function recordResumeAer(stateDir: string, node: string, inv: Inventory, read: Date): Promise<void> {
  try {
    (await import('../state/aer-write.js')).writeAer(stateDir, aerReferenceOf(inv, read, null));
  } catch (e) {
    (await log()).error({ node, why: (e as Error).message }, 'AER counters not recorded at resume; the next run judges from the one before');
  }
}
