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
