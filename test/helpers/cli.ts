// Runs the built CLI as a user would (node dist/cli.js …) and returns what it printed.
import { spawnSync } from 'node:child_process';
import { CLI } from './paths.js';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function cli(args: readonly string[], env: Record<string, string | undefined> = {}): CliRun {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
