// `gdrgate prolog` and `gdrgate health`: the gate Slurm runs, as one hook (engine/hook.ts runs its life cycle,
// engine/prolog.ts says what it judges and records). Here: the refusal outside Slurm, the report, the exit code.
import { gateHook, type GateArgs, type Startup } from '../engine/prolog.js';
import { runHook } from '../engine/hook.js';
import { ExecaExec, type Exec } from '../host/exec.js';
import { exitCode } from '../runner/exit.js';
import { out } from './common.js';

export type { GateArgs, Startup };

/** The gate's arguments as typed: `--outside-slurm` lets a prolog run (and drain) where Slurm did not start it. */
export interface GateCliArgs extends GateArgs {
  readonly outsideSlurm?: boolean | undefined;
}

/**
 * Why this prolog must not run, or null. slurmd starts the Prolog with SLURM_JOB_ID and, since 20.11,
 * SLURM_SCRIPT_CONTEXT=prolog_slurmd (src/plugins/prep/script/prep_script_slurmd.c); a shell on the node has
 * neither, and a prolog typed there would judge the node and could drain it. The HealthCheckProgram gets neither
 * (slurmd.c run_script_health_check: SLURMD_NODENAME only) and runs outside any job: health stays allowed.
 */
export function refusedOutsideSlurm(a: GateCliArgs, env: NodeJS.ProcessEnv): string | null {
  if (a.mode !== 'prolog' || a.dryRun || a.outsideSlurm) return null;
  if (env.SLURM_JOB_ID || env.SLURM_SCRIPT_CONTEXT === 'prolog_slurmd') return null;
  return 'prolog: not started by slurmd (neither SLURM_JOB_ID nor SLURM_SCRIPT_CONTEXT=prolog_slurmd is set), and a prolog may drain this node. By hand: `gdrgate check` to look, `gdrgate prolog --dry-run` to see what the gate would do, `gdrgate prolog --outside-slurm` to run it as a Prolog anyway';
}

export async function gateCommand(a: GateCliArgs, exec: Exec = new ExecaExec(), startup: Startup = 'modules'): Promise<number> {
  const refused = refusedOutsideSlurm(a, process.env);
  if (refused) {
    // Said here and answered with the usage exit code, before anything is read.
    process.stderr.write(`gdrgate: ${refused}\n`);
    return exitCode('usage');
  }
  const r = await runHook({ ...gateHook(a, { env: process.env, startup }), exec });
  for (const t of r.report) out(t);
  if (r.summary !== null) out(r.summary);
  return r.code;
}
