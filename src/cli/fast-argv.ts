// The prolog's argument parser: only `prolog|health [--config F] [--root D] [--baseline F] [--dry-run] [--outside-slurm]`.
// Anything else (help, typos, other commands) returns null and goes to yargs for a proper message.
import type { GateCliArgs } from './gate.js';

const VALUED = new Set(['--config', '--root', '--baseline']);

export function parseGateArgv(argv: readonly string[]): GateCliArgs | null {
  const [mode, ...rest] = argv;
  if (mode !== 'prolog' && mode !== 'health') return null;
  const v: Record<string, string> = {};
  let dryRun = false;
  let outsideSlurm = false;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const eq = a.indexOf('=');
    const key = eq > 0 ? a.slice(0, eq) : a;
    if (a === '--dry-run') dryRun = true;
    else if (a === '--outside-slurm') outsideSlurm = true;
    else if (VALUED.has(key)) {
      const val = eq > 0 ? a.slice(eq + 1) : rest[++i];
      if (val === undefined || val === '' || key in v) return null;
      v[key] = val;
    } else return null;
  }
  return { mode, config: v['--config'], root: v['--root'], baseline: v['--baseline'], dryRun, outsideSlurm };
}
