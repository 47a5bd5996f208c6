// Pure: does this epilog probe? Every Nth job by SLURM_JOB_ID, and/or at least T since the last probing run.
import type { SamplingPolicy } from '../probes/config.js';
import { CLOCK_TOLERANCE_MS } from '../samples/stats.js';

/** What the spool directory remembers between epilogs (probe-stamp.json). */
export interface Stamp {
  /** Unix ms when the last probing run started. */
  readonly ts: number;
  readonly job: string | null;
  /** Plan unit the next run starts with (where the last budget cut fell). */
  readonly cursor: number;
}

export interface SamplingVerdict {
  readonly probe: boolean;
  readonly why: string;
}

/** `stamp` is read only when the interval rule needs it: a job outside an every-Nth-job policy costs no I/O. */
export function samplingDecision(p: SamplingPolicy, job: string | null, stamp: () => Stamp | null, now: number): SamplingVerdict {
  const rules: { ok: boolean; why: string }[] = [];
  if (p.everyNthJob !== null) {
    const n = job !== null && /^\d+$/.test(job) ? Number(job) % p.everyNthJob : null;
    rules.push({ ok: n === 0, why: n === null ? 'no job id for everyNthJob' : `job ${job} % ${p.everyNthJob} = ${n}` });
    if (p.combine === 'any' && n === 0) return { probe: true, why: rules[0]!.why };
    if (p.combine === 'all' && n !== 0) return { probe: false, why: rules[0]!.why };
  }
  if (p.minIntervalS !== null) {
    const s = stamp();
    const ago = s === null ? null : Math.floor((now - s.ts) / 1000);
    // A stamp later than now + CLOCK_TOLERANCE_MS was written while the clock ran ahead (or is garbage): it says
    // nothing about when we last probed, so it is stale and this epilog probes (and rewrites it). Read as "just
    // probed", it would stop probing until the clock caught up, up to a year for a bad RTC.
    const future = s !== null && s.ts - now > CLOCK_TOLERANCE_MS;
    const ok = ago === null || future || ago >= p.minIntervalS;
    const why =
      ago === null ? 'no probing run recorded yet'
      : future ? `last probing run stamped ${-ago} s in the future (clock moved back?): taken as stale`
      // A stamp within the tolerance ahead of now: another epilog's, written after this one read the clock: just now.
      : `last probing run ${Math.max(0, ago)} s ago (every ${p.minIntervalS} s at most)`;
    rules.push({ ok, why });
  }
  if (rules.length === 0) return { probe: true, why: 'no sampling rule: every epilog probes' };
  const probe = p.combine === 'all' ? rules.every((r) => r.ok) : rules.some((r) => r.ok);
  return { probe, why: rules.map((r) => r.why).join('; ') };
}

/** Re-types probe-stamp.json; null when it is not one (a fresh start, never an error). */
export function parseStamp(text: string): Stamp | null {
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null) return null;
    const o = v as Record<string, unknown>;
    const ts = o['ts'];
    const cursor = o['cursor'];
    const job = o['job'];
    if (typeof ts !== 'number' || !Number.isFinite(ts) || typeof cursor !== 'number' || !Number.isSafeInteger(cursor) || cursor < 0) return null;
    return { ts, cursor, job: typeof job === 'string' ? job : null };
  } catch {
    return null;
  }
}
