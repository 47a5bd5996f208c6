// `gdrgate epilog`: the Slurm Epilog (src/epilog/command.ts); prints its report and returns its exit code.
import type { EpilogArgs } from '../epilog/command.js';
import type { Exec } from '../host/exec.js';
import { out } from './common.js';

export async function epilogCommand(a: EpilogArgs, env: NodeJS.ProcessEnv = process.env, exec?: Exec): Promise<number> {
  const { runEpilog } = await import('../epilog/command.js');
  const r = await runEpilog(a, env, exec);
  for (const t of r.text) out(t);
  return r.code;
}
