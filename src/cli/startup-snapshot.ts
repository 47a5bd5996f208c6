// The gate as a V8 startup snapshot (dist/gate.blob; scripts/startup-snapshot.mjs bundles, scripts/build-blob.mjs
// makes the blob): `node --snapshot-blob dist/gate.blob prolog --config F` starts with every module of the gate
// loaded, evaluated and, after a warm-up run, compiled, so a prolog pays Node's own start-up and its checks,
// not the loading and compiling of ~1 MB of code. The Slurm wrappers use it when it is there and fall back to
// dist/cli.js when this Node cannot load it (slurm/prolog.sh). Only the gate lives in the blob.
import { startupSnapshot } from 'node:v8';
import { parseGateArgv } from './fast-argv.js';
import { gateCommand } from './gate.js';
import { exitCodeOf } from './top.js';
import { exitCode } from '../runner/exit.js';
import { setLogFile } from '../log.js';
import { provideValidators, type AjvFn, type SchemaName } from '../schema.js';
// Loaded by gateCommand only on a passing prolog (and then node:crypto with it): here it is in the blob.
import '../state/prolog.js';

const USAGE = 'gdrgate: the startup snapshot runs only `prolog|health [--config F] [--root D] [--baseline F] [--dry-run] [--outside-slurm]`; run dist/cli.js for anything else\n';

/** Runs in the deserialized process: argv is [node, ...arguments] (no script path). */
async function main(): Promise<void> {
  const code = await exitCodeOf(async () => {
    const gate = parseGateArgv(process.argv.slice(1));
    if (!gate) {
      process.stderr.write(USAGE);
      return exitCode('usage');
    }
    return gateCommand(gate, undefined, 'snapshot');
  });
  process.exit(code);
}

/**
 * Called once, while the snapshot is built. `warmUp`: a JSON array of configs, one passing prolog each, run in turn
 * before the heap is serialized so the code a prolog runs is compiled in the blob (scripts/build-blob.mjs points
 * them at the bundled capture and a generated switched tree, throwaway state directories, SLURM_JOB_ID 1). Their
 * reports go to the builder's stdout; the logger is dropped, so the blob opens its own on first use. Nothing they
 * read stays: each run reads its node anew.
 */
export function prepareSnapshot(validators: Partial<Record<SchemaName, AjvFn>>, warmUp?: string): void {
  provideValidators(validators);
  startupSnapshot.setDeserializeMainFunction(() => void main());
  const configs = warmUp ? (JSON.parse(warmUp) as string[]) : [];
  void configs
    .reduce<Promise<unknown>>((before, config) => before.then(() => gateCommand({ mode: 'prolog', config, dryRun: false })), Promise.resolve())
    .finally(() => setLogFile(undefined));
}
