// `gdrgate task`: Slurm's TaskProlog, or with --standalone a report for a person inside a container; one hook
// (engine/hook.ts) either way, its judge and record in task/hook.ts.
import { runHook } from '../engine/hook.js';
import { UsageError } from '../errors.js';
import { parseJobId } from '../state/names.js';
import { standaloneHook, taskPrologHook, type TaskArgs } from '../task/hook.js';
import { out } from './common.js';

export type { TaskArgs };

function jobOf(env: NodeJS.ProcessEnv): string {
  const job = parseJobId(env.SLURM_JOB_ID);
  if (job === null) throw new UsageError('not inside a Slurm job (SLURM_JOB_ID unset or malformed); run it by hand with --standalone');
  return job;
}

export async function taskCommand(a: TaskArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const r = a.standalone ? await runHook(standaloneHook(a, env)) : await runHook(taskPrologHook(a, env, jobOf(env)));
  for (const t of r.report) out(t);
  return r.code;
}
