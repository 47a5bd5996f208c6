#!/usr/bin/env node
// gdrgate command line: runs one command and owns the exit code (the one top-level catch, cli/top.ts). The
// Slurm gate (prolog/health with plain flags) skips yargs: every job pays for this start-up. The Slurm
// wrappers start the gate from its startup snapshot (dist/gate.blob, cli/startup-snapshot.ts) when they can.
import { exitCodeOf } from './cli/top.js';
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

const code = await exitCodeOf(async () => {
  const argv = process.argv.slice(2);
  const gate = parseGateArgv(argv);
  return gate ? (await gateModule()).gateCommand(gate) : (await import('./cli/commands.js')).main(argv);
});
// Exit now: after a deadline, a blocked read may still be pending and must not keep the prolog alive.
process.exit(code);
