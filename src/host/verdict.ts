// The Slurm wrappers' verdict pipe. slurm/*.sh pass GDRGATE_VERDICT_FD, a pipe of their own, and gdrgate writes its
// exit code there as it ends: an exit code it did not write is not its verdict. Node exits 1 for an exception thrown
// before or outside gdrgate's code (a program missing, unreadable or cut short) and 0 for an empty program, and a
// Prolog's 1 drains the node, so the wrappers fail open, and say so, on any exit the gate did not write.
import { closeSync, fstatSync, writeSync } from 'node:fs';

/** The descriptor the wrappers name: a number from 3 to 1023 (never stdin, stdout or stderr), else none. */
export function verdictFd(value: string | undefined): number | null {
  if (value === undefined || !/^[1-9][0-9]{0,3}$/.test(value)) return null;
  const fd = Number(value);
  return fd >= 3 && fd <= 1023 ? fd : null;
}

/**
 * The wrappers' descriptor, taken out of `env` (process.env: gdrgate's children, scontrol and the probes, never see
 * the variable, so no child that runs gdrgate again tells a verdict of its own into the wrapper's pipe).
 */
export function takeVerdictFd(env: NodeJS.ProcessEnv = process.env): number | null {
  const fd = verdictFd(env.GDRGATE_VERDICT_FD);
  delete env.GDRGATE_VERDICT_FD;
  taken = fd;
  return fd;
}

/** The descriptor takeVerdictFd took, until tellVerdict closes it. */
let taken: number | null = null;

/** A pipe or a socket: the wrappers' (a file or a terminal named there is left alone). */
const isPipe = (fd: number): boolean => {
  const st = fstatSync(fd);
  return st.isFIFO() || st.isSocket();
};

/**
 * Tells the wrappers, as soon as it is so, that this run's drain of the node was written (a `drained` line): whatever
 * ends the run after (a kill at the hard bound or by the OOM killer, a full stdout), the Prolog then fails, and the job
 * does not start on the node just drained. Never throws.
 */
export function tellDrained(): void {
  if (taken === null) return;
  try {
    if (isPipe(taken)) writeSync(taken, 'drained\n');
  } catch {
    // Closed, or not ours: the verdict at the end still stands.
  }
}

/**
 * Writes `code` and a newline into the wrappers' pipe `fd` (takeVerdictFd), when there is one (a pipe or a socket: a
 * descriptor that is anything else, a file or a terminal, is left alone), and closes it: written once, by the run
 * that decided. Never throws: the exit code still stands.
 */
export function tellVerdict(code: number, fd: number | null): void {
  if (fd === null) return;
  if (fd === taken) taken = null;
  try {
    if (!isPipe(fd)) return;
    writeSync(fd, `${code}\n`);
    closeSync(fd);
  } catch {
    // Closed, or not ours: the wrapper then reads no verdict and fails open, saying so.
  }
}
