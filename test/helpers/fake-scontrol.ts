// A stand-in for scontrol in a throwaway directory, answering with real Slurm 22.05.8 output
// (test/fixtures/scontrol) and recording every call; and the baseline the gate tests capture from their tree.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from './cli.js';
import { fixture } from './paths.js';

export type ScontrolMode = 'stateful' | 'hang' | 'crash' | 'not-found' | 'update-fails';

export interface FakeScontrol {
  /** The executable to put in a config's `scontrol`. */
  readonly path: string;
  /** One line per call: its arguments. */
  readonly calls: string;
  /** What `show` prints next. */
  readonly state: string;
  /**
   * The argv of the process a 'hang' scontrol becomes (a sleep of 600 s), unique to this stand-in: a test that looks
   * for it left running finds its own, never another file's hung sleep (tap runs two files at once).
   */
  readonly hangArgv: readonly string[];
  drainCalls(): string[];
  /** Marks the node drained by someone else (an admin), as `scontrol show node` would then say. */
  adminDrain(reason: string): void;
}

const IDLE = fixture('scontrol/show_node_o_idle_22.05.8.txt');
let made = 0;

export function fakeScontrol(dir: string, mode: ScontrolMode = 'stateful'): FakeScontrol {
  const calls = path.join(dir, 'scontrol.calls');
  const state = path.join(dir, 'scontrol.state');
  writeFileSync(state, readFileSync(IDLE));
  // sleep adds its arguments: 600 s and two fractions that name this process and this stand-in.
  const hangArgv = ['/bin/sleep', '600', `0.${process.pid}`, `0.${made++}`];
  const body: Record<ScontrolMode, string> = {
    // show: print the recorded state; update ... state=drain reason=R: rewrite the real drained line with R;
    // state=resume: back to the real idle line.
    // The capture is node vm's; asked for another node, it answers as Slurm would for that node: its own NodeName.
    stateful: `case "$1" in
  show) sed -e "s/^NodeName=vm /NodeName=$4 /" "${state}" ;;
  update) for a in "$@"; do case "$a" in reason=*) r=\${a#reason=};; state=resume) r=;; esac; done
    if [ -n "$r" ]; then sed -e "s/State=IDLE /State=IDLE+DRAIN /" -e "s|\\$| Reason=$r [root@2026-11-29T14:39:05]|" "${IDLE}" > "${state}.new" && mv "${state}.new" "${state}"
    else cp "${IDLE}" "${state}"; fi ;;
esac`,
    hang: `exec ${hangArgv.join(' ')}`,
    crash: 'kill -SEGV $$',
    'not-found': `cat "${fixture('scontrol/show_node_o_not_found_stderr_22.05.8.txt')}" >&2; exit 1`,
    // show as Slurm shows the node; every update refused as Slurm 22.05.8 refused one (exit 1, its stderr).
    'update-fails': `case "$1" in
  show) sed -e "s/^NodeName=vm /NodeName=$4 /" "${state}" ;;
  update) cat "${fixture('scontrol/update_drain_invalid_user_stderr_22.05.8.txt')}" >&2; exit 1 ;;
esac`,
  };
  const exe = path.join(dir, 'scontrol');
  writeFileSync(exe, `#!/bin/bash\necho "$*" >> "${calls}"\n${body[mode]}\n`);
  chmodSync(exe, 0o755);
  return {
    path: exe,
    calls,
    state,
    hangArgv,
    drainCalls: () => (existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter((l) => l.includes('state=drain')) : []),
    adminDrain: (reason) =>
      writeFileSync(state, readFileSync(IDLE, 'utf8').replace('State=IDLE ', 'State=IDLE+DRAIN ').replace(/\n?$/, ` Reason=${reason} [admin@2026-11-29T14:00:00]\n`)),
  };
}

/** `gdrgate baseline capture` of `tree` (every node matches), written to `file`. */
export function captureBaseline(tree: string, cls: string, file: string): void {
  const cap = cli(['baseline', 'capture', '--root', tree, '--class', cls, '--match', '*']);
  if (cap.code !== 0) throw new Error(cap.stderr);
  writeFileSync(file, cap.stdout);
}
