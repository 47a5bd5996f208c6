// The Slurm hooks' argument parser, for the command lines the wrappers pass (slurm/prolog.sh, health.sh,
// taskprolog.sh): `prolog|health [--config F] [--root D] [--baseline F] [--dry-run] [--outside-slurm]` and
// `task [--config F] [--root D] [--fail] [--standalone]`. Slurm runs them for every job and every task, and yargs
// alone costs more than the hook's own work (it lays out the whole help text on every parse). Anything else (help,
// typos, `--flag=` forms with odd values, other commands) returns null and goes to yargs for a proper message.
import type { GateCliArgs } from './gate.js';
import type { TaskArgs } from './task.js';

/** `rest` as flags: each valued flag once with a value that is not empty and not another flag; each boolean once. */
function flags(rest: readonly string[], valued: readonly string[], booleans: readonly string[]): { values: Record<string, string>; set: Set<string> } | null {
  const values: Record<string, string> = {};
  const set = new Set<string>();
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const eq = a.indexOf('=');
    const key = eq > 0 ? a.slice(0, eq) : a;
    if (booleans.includes(a)) {
      if (set.has(a)) return null;
      set.add(a);
    } else if (valued.includes(key)) {
      const val = eq > 0 ? a.slice(eq + 1) : rest[++i];
      if (val === undefined || val === '' || val.startsWith('-') || key in values) return null;
      values[key] = val;
    } else return null;
  }
  return { values, set };
}

export function parseGateArgv(argv: readonly string[]): GateCliArgs | null {
  const [mode, ...rest] = argv;
  if (mode !== 'prolog' && mode !== 'health') return null;
  const f = flags(rest, ['--config', '--root', '--baseline'], ['--dry-run', '--outside-slurm']);
  if (!f) return null;
  const v = f.values;
  return { mode, config: v['--config'], root: v['--root'], baseline: v['--baseline'], dryRun: f.set.has('--dry-run'), outsideSlurm: f.set.has('--outside-slurm') };
}

export function parseTaskArgv(argv: readonly string[]): TaskArgs | null {
  const [cmd, ...rest] = argv;
  if (cmd !== 'task') return null;
  const f = flags(rest, ['--config', '--root'], ['--fail', '--standalone']);
  if (!f) return null;
  return { standalone: f.set.has('--standalone'), root: f.values['--root'], config: f.values['--config'], fail: f.set.has('--fail') };
}
