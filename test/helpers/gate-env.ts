// A throwaway gate installation for tests: a tree, a baseline captured from it, a config, and a fake
// scontrol that answers with real Slurm 22.05.8 output (test/fixtures/scontrol) and records every call.
import { chmodSync, cpSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cli, type CliRun } from './cli.js';
import { fixture, H200 } from './paths.js';
import { trainGpuTo } from './h200-link.js';

export type ScontrolMode = 'stateful' | 'hang' | 'crash' | 'not-found';

export interface GateEnv {
  readonly dir: string;
  readonly tree: string;
  readonly config: string;
  readonly log: string;
  readonly calls: string;
  writeConfig(extra?: Record<string, unknown>): void;
  prolog(args?: string[], env?: Record<string, string>): CliRun;
  drainCalls(): string[];
}

export function makeGateEnv(mode: ScontrolMode = 'stateful'): GateEnv {
  const dir = mkdtempSync(path.join(tmpdir(), 'gdrgate-test-'));
  const tree = path.join(dir, 'tree');
  cpSync(H200, tree, { recursive: true, verbatimSymlinks: true });
  const baseline = path.join(dir, 'baseline.json');
  const cap = cli(['baseline', 'capture', '--root', tree, '--class', 'test', '--match', '*']);
  if (cap.code !== 0) throw new Error(cap.stderr);
  writeFileSync(baseline, cap.stdout);
  const calls = path.join(dir, 'scontrol.calls');
  const state = path.join(dir, 'scontrol.state');
  writeFileSync(state, readFileSync(fixture('scontrol/show_node_o_idle_22.05.8.txt')));
  const scontrol = path.join(dir, 'scontrol');
  const body: Record<ScontrolMode, string> = {
    // show: print the recorded state; update ... state=drain reason=R: rewrite the real drained line with R.
    stateful: `case "$1" in
  show) cat "${state}" ;;
  update) for a in "$@"; do case "$a" in reason=*) r=\${a#reason=};; state=resume) r=;; esac; done
    if [ -n "$r" ]; then sed -e "s/State=IDLE /State=IDLE+DRAIN /" -e "s|\\$| Reason=$r [root@2026-11-29T14:39:05]|" "${fixture('scontrol/show_node_o_idle_22.05.8.txt')}" > "${state}.new" && mv "${state}.new" "${state}"
    else cp "${fixture('scontrol/show_node_o_idle_22.05.8.txt')}" "${state}"; fi ;;
esac`,
    hang: 'exec /bin/sleep 600',
    crash: 'kill -SEGV $$',
    'not-found': `cat "${fixture('scontrol/show_node_o_not_found_stderr_22.05.8.txt')}" >&2; exit 1`,
  };
  writeFileSync(scontrol, `#!/bin/bash\necho "$*" >> "${calls}"\n${body[mode]}\n`);
  chmodSync(scontrol, 0o755);
  const config = path.join(dir, 'config.json');
  const log = path.join(dir, 'gate.log');
  const env: GateEnv = {
    dir,
    tree,
    config,
    log,
    calls,
    writeConfig(extra = {}) {
      writeFileSync(config, JSON.stringify({ baseline, root: tree, scontrol, logFile: log, stateDir: path.join(dir, 'run'), ...extra }));
    },
    prolog(args = [], e = {}) {
      return cli(['prolog', '--config', config, ...args], { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42', ...e });
    },
    drainCalls() {
      return existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter((l) => l.includes('state=drain')) : [];
    },
  };
  env.writeConfig();
  return env;
}

/** The H200's GPU link trained down to x8 (sysfs and Link Status, as on a node). */
export function breakLink(tree: string): void {
  trainGpuTo(tree, 8);
}
