// Resume as `gdrgate resume` does (re-check without any drill overlay, then only a drain we own), for drill run/stop.
import { loadBaselineFor } from '../baseline/load.js';
import type { Config } from '../config.js';
import type { Exec } from '../host/exec.js';
import { outcomeOf } from '../runner/policy.js';
import { runChecks, selectChecks } from '../runner/run.js';
import { resumeAction } from '../slurm/ownership.js';
import { Scontrol } from '../slurm/scontrol.js';
import { gather } from '../cli/common.js';
import { hasMarker } from './marker.js';

export type Resumed = { readonly resumed: boolean; readonly why: string };

/** Resumes `node` only if its reason is ours and carries a drill marker (`marker`: that drill's) and the checks pass. */
export async function resumeDrillDrain(cfg: Config, exec: Exec, node: string, marker?: string): Promise<Resumed> {
  const scontrol = new Scontrol(exec, { path: cfg.scontrol, timeoutMs: cfg.scontrolTimeoutMs });
  const cur = await scontrol.show(node);
  if (!cur.ok) return { resumed: false, why: cur.why };
  const act = resumeAction(cur.node);
  if (act.act !== 'resume') return { resumed: false, why: act.why };
  if (!hasMarker(cur.node.reason, marker)) return { resumed: false, why: `drained for a reason without ${marker ? `drill=${marker}` : 'a drill marker'} (${cur.node.reason ?? 'none'}): left drained` };
  const [{ inv }, sel] = await Promise.all([gather(cfg.root, cfg.slurmdPidFiles), loadBaselineFor(cfg.baseline, node)]);
  const outcome = outcomeOf(runChecks({ inv, baseline: sel.cls }, selectChecks(cfg.checks)));
  if (outcome.kind !== 'healthy') {
    const why = outcome.kind === 'unhealthy' ? outcome.failing.map((f) => `${f.check} ${f.subject}: ${f.message}`).join('; ') : outcome.message;
    return { resumed: false, why: `still unhealthy, left drained: ${why}` };
  }
  const w = await scontrol.resume(node);
  return w.ok ? { resumed: true, why: `resumed (was: ${cur.node.reason})` } : { resumed: false, why: w.why };
}
