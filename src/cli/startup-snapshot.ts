// The gate as a V8 startup snapshot: `node --snapshot-blob FILE prolog --config F` starts with every module of
// gdrgate loaded and evaluated and, after warm-up runs, the gate's code compiled, so a prolog pays Node's own
// start-up and its checks, not the loading and compiling of ~1 MB of code. A snapshot loads only in the Node
// build, with the V8 flags and on the CPU that made it, so it is made where it runs (`gdrgate startup-snapshot`,
// src/startup/make.ts) and the Slurm wrappers fall back to the plain program when it is refused.
import path from 'node:path';
import { startupSnapshot } from 'node:v8';
import { gateCommand } from './gate.js';
import { runCli } from './run.js';
import { realPath } from '../host/entries.js';
import { programIdentity as identity } from '../startup/build-id.js';
import { blobOf, fileSealProblem } from '../startup/blob-seal.js';
import { setLogFile } from '../log.js';
// Loaded by gateCommand only on a passing prolog (and then node:crypto with it): here it is in the blob.
import '../state/prolog.js';

/** The exit code of a stale blob: above gdrgate's own 0-3, so the wrappers run the plain program instead. */
export const STALE_EXIT = 10;
/** The exit code of a blob cut short or never sealed (blob-seal.ts): the wrappers run the plain program instead. */
export const DAMAGED_EXIT = 11;

/**
 * Whether `cli` (what a wrapper would run) is `program` (what the blob was made of), or the program's other shape
 * beside it (dist/cli.js and dist/gdrgate.cjs, one build: the npm layout); links resolved.
 */
function sameInstall(cli: string, program: string): boolean {
  try {
    const [c, p] = [realPath(cli), realPath(program)];
    return c === p || path.dirname(c) === path.dirname(p);
  } catch {
    return false;
  }
}

/**
 * Called once, while the snapshot is built. `warmUp`: a JSON array of configs, one passing prolog each, run in turn
 * before the heap is serialized so the code a prolog runs is compiled in the blob (each with a throwaway
 * baseline and state directory). The logger is dropped, so the blob opens its own on first use. Nothing they read
 * stays: each run reads its node anew. The deserialized process's argv is [node, ...arguments] (no script path).
 */
export function prepareSnapshot(warmUp?: string): void {
  const program = process.argv[1] ?? '';
  const made = identity(program);
  startupSnapshot.setDeserializeMainFunction(() => {
    // Cut short or never sealed: V8 may have read past the file's end; nothing of it runs.
    const blob = blobOf(process.execArgv);
    const cut = blob === null ? 'no --snapshot-blob among Node\'s arguments' : fileSealProblem(blob);
    if (cut !== null) {
      process.stderr.write(`gdrgate: the startup snapshot ${blob ?? ''} cannot be used: ${cut}; remake it: gdrgate startup-snapshot\n`);
      process.exit(DAMAGED_EXIT);
    }
    // The program was replaced (an upgrade, a rebuild) since the blob was made of it: the blob would run old code.
    if (identity(program) !== made) {
      process.stderr.write(`gdrgate: the startup snapshot is stale (${program} changed since it was made); remake it: gdrgate startup-snapshot\n`);
      process.exit(STALE_EXIT);
    }
    // The wrappers say which program they would run without it (CLI=, GDRGATE_CLI): a blob of another (a CLI= an admin
    // pointed elsewhere, a blob made by another installation) would judge with that other program's code.
    const cli = process.env.GDRGATE_CLI;
    if (cli && !sameInstall(cli, program)) {
      process.stderr.write(`gdrgate: the startup snapshot is of ${program}, not of ${cli}; remake it with that program: gdrgate startup-snapshot\n`);
      process.exit(STALE_EXIT);
    }
    void runCli(process.argv.slice(1), 'snapshot').then((code) => process.exit(code));
  });
  const configs = warmUp ? (JSON.parse(warmUp) as string[]) : [];
  void configs
    .reduce<Promise<unknown>>((before, config) => before.then(() => gateCommand({ mode: 'prolog', config, dryRun: true }, undefined, 'snapshot')), Promise.resolve())
    .finally(() => setLogFile(undefined));
}
