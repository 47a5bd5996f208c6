// Who is being judged: the node's Slurm name, one rule for every command.
import { hostname } from 'node:os';

/** An explicit --node, else slurmd's SLURMD_NODENAME, else the short host name. Empty strings count as unset. */
export function nodeName(env: NodeJS.ProcessEnv, explicit?: string): string {
  return explicit || env.SLURMD_NODENAME || hostname().split('.')[0]!;
}
