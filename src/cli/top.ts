// The one top-level catch, shared by the CLI (dist/cli.js) and the gate's startup snapshot (dist/gate.blob):
// a usage or config error exits 2, anything else 3, both said on stderr and the latter logged.
import { log } from '../log.js';
import { escapeText } from '../report/escape.js';
import { ConfigError, OutputCut, UsageError } from '../errors.js';
import { exitCode, resultOfError } from '../runner/exit.js';

export async function exitCodeOf(run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (e) {
    const usage = e instanceof UsageError || e instanceof ConfigError;
    process.stderr.write(`gdrgate: ${escapeText((e as Error).message)}\n`);
    // A cut output is said on stderr and is the exit code's business; it is no fault of the code to log.
    if (!usage && !(e instanceof OutputCut)) (await log()).error({ err: e }, 'internal error');
    return exitCode(resultOfError(usage));
  }
}
