#!/usr/bin/env node
// gdrgate command line: runs one command and owns the exit code (the one top-level catch). The Slurm
// gate (prolog/health with plain flags) skips yargs: every job pays for this start-up.
import { ConfigError } from './errors.js';
import { log } from './log.js';
import { UsageError } from './runner/run.js';
import { parseGateArgv } from './cli/fast-argv.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

type GateModule = typeof import('./cli/gate.js');

/**
 * The gate's code as one file (dist/gate.js, built unsplit by scripts/bundle.mjs): a prolog loads two files
 * instead of dozens of chunks. Running from sources (no bundle), the module itself.
 */
async function gateModule(): Promise<GateModule> {
  const one = new URL('./gate.js', import.meta.url);
  return existsSync(fileURLToPath(one)) ? ((await import(one.href)) as GateModule) : import('./cli/gate.js');
}

let code: number;
try {
  const argv = process.argv.slice(2);
  const gate = parseGateArgv(argv);
  code = gate ? await (await gateModule()).gateCommand(gate) : await (await import('./cli/commands.js')).main(argv);
} catch (e) {
  const usage = e instanceof UsageError || e instanceof ConfigError;
  process.stderr.write(`gdrgate: ${(e as Error).message}\n`);
  if (!usage) (await log()).error({ err: e }, 'internal error');
  code = usage ? 2 : 3;
}
// Exit now: after a deadline, a blocked read may still be pending and must not keep the prolog alive.
process.exit(code);
