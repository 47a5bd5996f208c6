// The wrappers (slurm/*.sh) run for real by the tests of test/slurm: a copy whose fixed settings directory
// /etc/gdrgate (this machine's) is a private one, a stand-in for node + cli.js, settings files, and a run as slurmd
// starts a hook (no PATH, cwd /).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/paths.js';

export type Script = 'prolog' | 'epilog' | 'taskprolog';
export const SCRIPTS = ['prolog', 'epilog', 'taskprolog'] as const;
const FIXED = '"/etc/gdrgate/${0##*/}"';
export const PROLOG_ENV = { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '42', SLURM_SCRIPT_CONTEXT: 'prolog_slurmd' };

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A kit in `dir`: its settings directory `etc`, the stand-in `fake` and the settings `base` that start it. */
export function wrapperKit(dir: string) {
  const etc = path.join(dir, 'etc-gdrgate');
  mkdirSync(etc, { recursive: true, mode: 0o755 });
  // The stand-in for node + cli.js (run as `/bin/sh FAKE args`): prints its arguments (and, with PARENT=1, its
  // parent's name), writes $RC into the wrapper's verdict pipe as gdrgate does (src/host/verdict.ts; not with
  // NOVERDICT=1, as Node's own exit) and exits $RC, or dies by SIGKILL, or never ends (RC=hang: it becomes a 30 s
  // sleep), or sleeps SLOW seconds first.
  const fake = path.join(dir, 'fake-cli.sh');
  writeFileSync(fake, '#!/bin/sh\necho "args: $*"\n[ "${PARENT-}" = 1 ] && echo "parent: $(cat /proc/$PPID/comm)"\n[ "${RC-}" = kill ] && kill -KILL $$\n[ "${RC-}" = hang ] && exec /bin/sleep 30\n[ -z "${SLOW-}" ] || /bin/sleep "$SLOW"\n[ -z "${GDRGATE_VERDICT_FD-}" ] || [ "${NOVERDICT-}" = 1 ] || echo "${RC:-0}" >"/proc/self/fd/$GDRGATE_VERDICT_FD"\nexit "${RC:-0}"\n', { mode: 0o755 });
  const base = `NODE=/bin/sh\nCLI=${fake}\nBLOB=\nAGENT=\n`;
  /** slurm/<script>.sh copied to `dst`, its fixed settings directory made `etc`; throws unless the literal is there once (`fixed`). */
  const install = (script: Script, dst: string, fixed = true): string => {
    const text = readFileSync(path.join(REPO, `slurm/${script}.sh`), 'utf8');
    const n = text.split(FIXED).length - 1;
    if (fixed && n !== 1) throw new Error(`slurm/${script}.sh names ${FIXED} ${n} times, want 1`);
    mkdirSync(path.dirname(dst), { recursive: true, mode: 0o755 });
    writeFileSync(dst, text.replace(FIXED, `"${etc}/\${0##*/}"`), { mode: 0o755 });
    chmodSync(dst, 0o755);
    return dst;
  };
  const conf = (file: string, text: string, mode = 0o644): void => {
    writeFileSync(file, text);
    chmodSync(file, mode);
  };
  /** `file` run with exactly `env`, (`under`: started by that program, a slurmd stand-in); killed after `timeoutMs`. */
  const run = (file: string, env: Record<string, string>, under?: string, timeoutMs = 60_000): Run => {
    const [cmd, args] = under ? [under, [file]] : [file, []];
    const r = spawnSync(cmd, args, { encoding: 'utf8', env, cwd: '/', timeout: timeoutMs });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  /** `file` run as `run` does, and how long it took in seconds (the hard bound's tests: killed at it, not later). */
  const timedRun = (file: string, env: Record<string, string>, timeoutMs = 30_000): { r: Run; s: number } => {
    const began = performance.now();
    const r = run(file, env, undefined, timeoutMs);
    return { r, s: (performance.now() - began) / 1000 };
  };
  /** `file` run with /usr/bin/timeout replaced by `broken` (a bind mount in a mount namespace of its own: needs unshare, root). */
  const underTimeout = (broken: string, file: string, env: Record<string, string>): Run => {
    const r = spawnSync('/usr/bin/unshare', ['-m', '--propagation', 'private', '/bin/sh', '-c', `/bin/mount --bind ${broken} /usr/bin/timeout && exec ${file}`], { encoding: 'utf8', cwd: '/', timeout: 30_000, env });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  return { etc, fake, base, install, conf, run, timedRun, underTimeout };
}
