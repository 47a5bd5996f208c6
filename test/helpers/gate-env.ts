// A throwaway gate installation for tests: a tree, a baseline captured from it, a config, and a fake
// scontrol that answers with real Slurm 22.05.8 output (test/fixtures/scontrol) and records every call.
import { cpSync, writeFileSync } from 'node:fs';

import path from 'node:path';
import { cli, type CliRun } from './cli.js';
import { captureBaseline, fakeScontrol, type ScontrolMode } from './fake-scontrol.js';

export type { ScontrolMode };
import { H200 } from './paths.js';
import { trainGpuTo } from './h200-link.js';
import { scratchDir } from './scratch.js';

export interface GateEnv {
  readonly dir: string;
  readonly tree: string;
  readonly config: string;
  readonly log: string;
  readonly calls: string;
  /** The argv of the fake scontrol's hung sleep in mode 'hang' (unique to this env). */
  readonly hangArgv: readonly string[];
  writeConfig(extra?: Record<string, unknown>): void;
  prolog(args?: string[], env?: Record<string, string>): CliRun;
  drainCalls(): string[];
}

export function makeGateEnv(mode: ScontrolMode = 'stateful'): GateEnv {
  const dir = scratchDir('gdrgate-test-');
  const tree = path.join(dir, 'tree');
  cpSync(H200, tree, { recursive: true, verbatimSymlinks: true });
  const baseline = path.join(dir, 'baseline.json');
  captureBaseline(tree, 'test', baseline);
  const sc = fakeScontrol(dir, mode);
  const { calls } = sc;
  const config = path.join(dir, 'config.json');
  const log = path.join(dir, 'gate.log');
  const env: GateEnv = {
    dir,
    tree,
    config,
    log,
    calls,
    hangArgv: sc.hangArgv,
    writeConfig(extra = {}) {
      // The deadline counts from the process's start (Node's own included, runner/deadline.ts runOrigin): a loaded
      // two-core machine can spend seconds there. Tests of the judgement get a wide one; tests of the clock set theirs.
      writeFileSync(config, JSON.stringify({ baseline, root: tree, scontrol: sc.path, logFile: log, stateDir: path.join(dir, 'run'), spool: path.join(dir, 'spool'), deadlineMs: 60_000, ...extra }));
    },
    prolog(args = [], e = {}) {
      return cli(['prolog', '--config', config, ...args], { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42', ...e });
    },
    drainCalls: sc.drainCalls,
  };
  env.writeConfig();
  return env;
}

/** The H200's GPU link trained down to x8 (sysfs and Link Status, as on a node). */
export function breakLink(tree: string): void {
  trainGpuTo(tree, 8);
}
