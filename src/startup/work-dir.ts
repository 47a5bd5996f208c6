// The startup snapshot's private work directory in TMPDIR (the built blob, its sealed copy, the warm-up configs and
// state: ~20 MiB), named with its builder's pid. Removed when the build ends, when SIGTERM, SIGINT or SIGHUP ends it
// (systemd stopping the agent's ExecStartPre, a ^C), and, for a builder killed outright (SIGKILL, a power cut into a
// persistent /tmp), by the next build: a directory of that name, this user's, mode 0700, whose pid no longer runs.
// (Two pid namespaces sharing one TMPDIR could take each other's live directory: that build then fails, and says so.)
import path from 'node:path';
import { listNames, makeTempDir, removeTree } from '../host/dirs.js';
import { lstatIfAny } from '../host/entries.js';
import { pidAlive } from '../host/process.js';

export const WORK_PREFIX = 'gdrgate-startup-';
const NAME = /^gdrgate-startup-(\d+)-[A-Za-z0-9]{6}$/;
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Removes what killed builders left in `tmp`; returns the names removed. Never another user's, a link or a file. */
export function sweepWorkDirs(tmp: string, uid: number, self = process.pid): string[] {
  let names: string[];
  try {
    names = listNames(tmp);
  } catch {
    return [];
  }
  const gone: string[] = [];
  for (const name of names) {
    const pid = Number(NAME.exec(name)?.[1] ?? NaN);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === self || pidAlive(pid)) continue;
    const st = lstatIfAny(path.join(tmp, name));
    if (!st?.isDirectory() || st.uid !== uid || (st.mode & 0o777) !== 0o700) continue;
    try {
      removeTree(path.join(tmp, name));
      gone.push(name);
    } catch {
      // One that cannot be removed (an immutable file in it, a mount) is left; it never stops the build.
    }
  }
  return gone;
}

/**
 * `fn` given a fresh private directory in `tmp`, removed whatever way `fn` ends: its return, its throw, or one of
 * SIGNALS, after which this process ends by that signal as it would have without the handler.
 */
export async function withWorkDir<T>(tmp: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = makeTempDir(path.join(tmp, `${WORK_PREFIX}${process.pid}-`));
  const onSignal = (sig: NodeJS.Signals): void => {
    removeTree(dir);
    for (const s of SIGNALS) process.removeListener(s, onSignal);
    process.kill(process.pid, sig);
  };
  for (const s of SIGNALS) process.on(s, onSignal);
  try {
    return await fn(dir);
  } finally {
    for (const s of SIGNALS) process.removeListener(s, onSignal);
    removeTree(dir);
  }
}
