// RLIMIT_MEMLOCK as the job's processes will have it. A TaskProlog runs before slurmstepd applies the
// propagated limits (verified on Slurm 22.05: the TaskProlog sees slurmd's 8 MiB, the task then 64 KiB), so its
// own /proc/self/limits is not the job's: SLURM_RLIMIT_MEMLOCK is. slurmstepd/ulimits.c _set_limit() sets the
// soft limit to that value; the client exports it only when slurm.conf propagates MEMLOCK (or for
// `--propagate`, value prefixed with "U"). A value above the hard limit: slurm.conf's is lowered to the hard limit,
// the user's (U) fails setrlimit() and the limit stays as it was.
import type { Limit } from '../model/inventory.js';
import type { Parsed } from '../parsers/sysfs.js';
import type { Bytes } from '../state/types.js';

/** RLIM_INFINITY as Slurm prints it (unsigned long). */
const RLIM_INFINITY = '18446744073709551615';

export type MemlockSource = 'self' | 'propagated';

export interface JobMemlock {
  readonly soft: Bytes;
  readonly hard: Bytes;
  readonly source: MemlockSource;
  /** The raw SLURM_RLIMIT_MEMLOCK, when set. */
  readonly env: string | null;
}

/** "65536", "U65536", "18446744073709551615" → bytes; anything else is malformed (Slurm itself errors on it). */
export function parseRlimitEnv(s: string): Parsed<Bytes> {
  const m = /^U?(\d{1,20})$/.exec(s);
  if (!m) return { ok: false, error: `SLURM_RLIMIT_MEMLOCK=${JSON.stringify(s.slice(0, 40))} is not a number` };
  if (m[1] === RLIM_INFINITY) return { ok: true, value: 'unlimited' };
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? { ok: true, value: n } : { ok: true, value: 'unlimited' };
}

export const atMost = (a: Bytes, b: Bytes): boolean => b === 'unlimited' || (a !== 'unlimited' && a <= b);
export const atLeast = (v: Bytes, min: Bytes): boolean => atMost(min, v);

/** The job's limit from this process's limit and Slurm's propagated value. */
export function jobMemlock(self: Limit, env: string | undefined): Parsed<JobMemlock> {
  if (env === undefined || env === '') return { ok: true, value: { soft: self.soft, hard: self.hard, source: 'self', env: null } };
  const p = parseRlimitEnv(env);
  if (!p.ok) return p;
  // Above the hard limit (slurmstepd/ulimits.c _set_limit): a value slurm.conf propagates is lowered to the hard
  // limit ("reducing req … to max"), so the job gets soft = hard; one the user asked for (`srun --propagate`, "U")
  // is set as it is, setrlimit() fails, and the job keeps the limit it had: self.soft.
  if (!atMost(p.value, self.hard)) return { ok: true, value: env.startsWith('U') ? { soft: self.soft, hard: self.hard, source: 'self', env } : { soft: self.hard, hard: self.hard, source: 'propagated', env } };
  return { ok: true, value: { soft: p.value, hard: self.hard, source: 'propagated', env } };
}
