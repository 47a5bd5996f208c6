// Resume as `gdrgate resume` does (re-check without every drill overlay, then only a drain we own), for drill run/stop.
import type { Config } from '../config.js';
import { nodeRecheck } from '../engine/recheck.js';
import type { Exec } from '../host/exec.js';
import { resumeOwned, type Resumed } from '../slurm/drain.js';
import { Scontrol } from '../slurm/scontrol.js';
import { hasMarker } from './marker.js';

export type { Resumed };

/** Resumes `node` only if its reason is ours and carries a drill marker (`marker`: that drill's) and the checks pass. */
export async function resumeDrillDrain(cfg: Config, exec: Exec, node: string, marker?: string): Promise<Resumed> {
  const scontrol = new Scontrol(exec, { path: cfg.scontrol, timeoutMs: cfg.scontrolTimeoutMs });
  const refuse = (reason: string | null): string | null =>
    hasMarker(reason, marker) ? null : `drained for a reason without ${marker ? `drill=${marker}` : 'a drill marker'} (${reason ?? 'none'}): left drained`;
  return resumeOwned(scontrol, node, { refuse, ...nodeRecheck(cfg, node, false).options, stateDir: cfg.stateDir });
}
