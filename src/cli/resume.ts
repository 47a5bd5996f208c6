// `gdrgate resume`: re-run the checks and resume the node only if they pass and the drain reason is ours.
import { hostname } from 'node:os';
import { loadBaselineFor } from '../baseline/load.js';
import { configPath, loadConfig } from '../config.js';
import { ExecaExec, type Exec } from '../host/exec.js';
import { outcomeOf } from '../runner/policy.js';
import { runChecks, selectChecks } from '../runner/run.js';
import { resumeAction } from '../slurm/ownership.js';
import { Scontrol } from '../slurm/scontrol.js';
import { gather, out } from './common.js';

export async function resumeCommand(a: { config?: string | undefined; force: boolean; node?: string | undefined }, exec: Exec = new ExecaExec()): Promise<number> {
  const cfg = await loadConfig(configPath(a.config));
  const node = a.node || process.env.SLURMD_NODENAME || hostname().split('.')[0]!;
  const scontrol = new Scontrol(exec, { path: cfg.scontrol, timeoutMs: cfg.scontrolTimeoutMs });
  const cur = await scontrol.show(node);
  const act = resumeAction(cur.ok ? cur.node : null);
  if (act.act !== 'resume') {
    out(`${node}: ${cur.ok ? act.why : cur.why}`);
    return act.act === 'none' ? 0 : 1;
  }
  if (!a.force) {
    // --force skips this re-check; it never overrides a reason that is not ours.
    const [{ inv }, sel] = await Promise.all([gather(cfg.root, cfg.slurmdPidFiles), loadBaselineFor(cfg.baseline, node)]);
    const outcome = outcomeOf(runChecks({ inv, baseline: sel.cls }, selectChecks(cfg.checks)));
    if (outcome.kind !== 'healthy') {
      const why = outcome.kind === 'unhealthy' ? outcome.failing.map((f) => `${f.check} ${f.subject}: ${f.message}`).join('; ') : outcome.message;
      out(`${node}: still unhealthy, left drained: ${why}`);
      return 1;
    }
  }
  const w = await scontrol.resume(node);
  out(w.ok ? `${node}: resumed (was: ${cur.ok ? cur.node.reason : '?'})` : `${node}: ${w.why}`);
  return w.ok ? 0 : 3;
}
