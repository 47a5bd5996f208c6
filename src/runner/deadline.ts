// The run's hard deadline (DESIGN §9): async work races a timer; synchronous phases ask `check()` between steps,
// since no timer fires while JavaScript runs.
import { DeadlineError } from '../errors.js';

export class Deadline {
  /** performance.now() at which the run must have ended. */
  readonly at: number;
  constructor(
    readonly ms: number,
    started = performance.now(),
  ) {
    this.at = started + ms;
  }
  left(): number {
    return this.at - performance.now();
  }
  /** Throws once the deadline has passed; `where` names the phase in the message. */
  check(where: string): void {
    if (performance.now() > this.at) throw new DeadlineError(`deadline of ${this.ms} ms exceeded ${where}`);
  }
}

/** performance.now() when this process started: process.uptime() counts from there (Node's own start included). */
export function processStart(): number {
  return performance.now() - process.uptime() * 1000;
}

/** bash's $EPOCHREALTIME: seconds since the epoch, a fraction after a dot (or the locale's comma). */
const EPOCH_RE = /^([0-9]{1,12})(?:[.,]([0-9]{1,9}))?$/;

/**
 * Where a Slurm hook's deadline counts from, as slurmd sees the run: the wrapper's own start when it says so
 * (`GDRGATE_T0`, bash's $EPOCHREALTIME taken first thing), else this process's start. A value that is not the
 * wrapper's (malformed, in the future, older than `maxAgeMs`) is ignored: it could only move the deadline.
 */
export function runOrigin(env: NodeJS.ProcessEnv, maxAgeMs = 120_000, nowMs = Date.now()): number {
  const own = processStart();
  const m = EPOCH_RE.exec(env.GDRGATE_T0 ?? '');
  if (!m) return own;
  const t0 = Number(m[1]) * 1000 + Number(`0.${m[2] ?? '0'}`) * 1000;
  const age = nowMs - t0;
  if (!(age >= 0 && age <= maxAgeMs)) return own;
  return Math.min(own, performance.now() - age);
}

/** Settles with `work`, or rejects once the deadline has passed; the timer never outlives the race. */
export async function withDeadline<T>(work: Promise<T>, d: Deadline, what = 'while reading the node'): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, rej) => {
    t = setTimeout(() => rej(new DeadlineError(`deadline of ${d.ms} ms exceeded ${what}`)), Math.max(0, d.left()));
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(t);
  }
}
