// One run of the command line, whichever way the program was started: from its modules (dist/cli.js), from the
// one-file program (dist/gdrgate.cjs, installed as /usr/lib/gdrgate/gdrgate.cjs) or from a startup snapshot made
// of that file (the deserialized main: src/cli/startup-snapshot.ts). The Slurm gate (prolog/health with plain
// flags) and the TaskProlog skip yargs: every job, and every task, pays for this start-up.
import { exitCodeOf } from './top.js';
import { parseGateArgv, parseTaskArgv } from './fast-argv.js';
import { gateCommand, type Startup } from './gate.js';
import { out } from '../host/stdout.js';
import { takeVerdictFd, tellVerdict } from '../host/verdict.js';
import { nodeTooOld, versionLine } from '../version.js';

/** Runs the command line and returns its exit code, told to the Slurm wrappers' verdict pipe (src/host/verdict.ts). */
export async function runCli(argv: string[], startup: Exclude<Startup, 'agent'>): Promise<number> {
  const verdictFd = takeVerdictFd();
  const code = await exitCodeOf(async () => {
    // `version` too: under `node --snapshot-blob B`, Node itself takes `--version`.
    if (argv.length === 1 && (argv[0] === '--version' || argv[0] === 'version')) {
      out(versionLine());
      return 0;
    }
    // An older Node fails somewhere inside (a library call it lacks), maybe only while draining: it runs nothing.
    const old = nodeTooOld();
    if (old !== null) throw new Error(old);
    const gate = parseGateArgv(argv);
    if (gate) return gateCommand(gate, undefined, startup);
    // The TaskProlog, for every task of every step: as the gate, without yargs.
    const task = parseTaskArgv(argv);
    if (task) return (await import('./task.js')).taskCommand(task);
    return (await import('./commands.js')).main(argv);
  });
  tellVerdict(code, verdictFd);
  return code;
}
