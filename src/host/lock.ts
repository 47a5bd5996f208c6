// The one lock file of the gate (drain, probing epilog, spool rotation): created with O_EXCL|O_NOFOLLOW, holding
// `<pid> <ms> <token> start=<ticks>`; stale when its pid is gone or now names a process started at another time (the
// pid reused), or when older than staleMs (an empty or foreign one: by age alone); broken by exactly one breaker;
// released only by its owner (it may have been broken and retaken).
import fs from 'node:fs';
import { errno, readSmall, writeNew } from './files.js';
import { ownerRuns, ownStartTicks } from './process.js';

export type Lock =
  | { readonly ok: true; release(): void }
  /** held: another process has it; otherwise the lock could not be created at all (no directory, read-only disk). */
  | { readonly ok: false; readonly held: boolean; readonly why: string };

export interface LockOptions {
  readonly staleMs: number;
  /** What a held lock means, for the message: (pid) => `another epilog (pid 123) is probing`. */
  readonly holder: (pid: string) => string;
  /** Break a stale lock (default true). */
  readonly breakStale?: boolean;
}

const MAX_LOCK_BYTES = 256;

function content(file: string): string | null {
  const r = readSmall(file, { max: MAX_LOCK_BYTES });
  return r.ok ? r.value.toString('utf8') : null;
}

function ownerPid(text: string): number | null {
  const m = /^(\d{1,10})[ \n]/.exec(text);
  const pid = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

/** The owner's start time the lock recorded (a lock written before it was recorded has none). */
function ownerStart(text: string): string | null {
  return /^\d{1,10} \d{1,16} [0-9a-z]{0,16} start=(\d{1,20})\n$/.exec(text)?.[1] ?? null;
}

/**
 * Renamed aside first so only one breaker wins, and put back if what was renamed turns out to be newer than the
 * lock judged (someone broke and retook it meanwhile). True when the caller should try O_EXCL again.
 */
function breakIfStale(file: string, seen: string | null): boolean {
  try {
    const aside = `${file}.stale.${process.pid}.${Date.now()}`;
    fs.renameSync(file, aside);
    const fresh = content(aside) !== seen;
    if (fresh) {
      try {
        fs.linkSync(aside, file);
      } catch {
        /* the name is taken again: that owner's lock stands */
      }
    }
    fs.unlinkSync(aside);
    return !fresh;
  } catch (e) {
    return errno(e) === 'ENOENT';
  }
}

function isStale(file: string, seen: string | null, staleMs: number): boolean {
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st === undefined) return true;
  if (!st.isFile()) return true; // a link or FIFO planted at the name is nobody's lock
  if (Date.now() - st.mtimeMs >= staleMs) return true;
  const pid = seen === null ? null : ownerPid(seen);
  return pid !== null && !ownerRuns(pid, ownerStart(seen!));
}

export function takeLock(file: string, o: LockOptions): Lock {
  const start = ownStartTicks();
  const token = `${process.pid} ${Date.now()} ${Math.random().toString(36).slice(2)}${start === null ? '' : ` start=${start}`}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeNew(file, token, 0o600);
      return { ok: true, release: () => (content(file) === token ? fs.rmSync(file, { force: true }) : undefined) };
    } catch (e) {
      if (errno(e) !== 'EEXIST') return { ok: false, held: false, why: `cannot create ${file}: ${(e as Error).message}` };
    }
    let seen: string | null = null;
    let stale: boolean;
    try {
      seen = content(file);
      stale = isStale(file, seen, o.staleMs);
    } catch {
      continue; // gone meanwhile: try again
    }
    const pid = seen === null ? null : ownerPid(seen);
    const why = o.holder(pid !== null ? ` (pid ${pid})` : '');
    if (attempt > 0 || !stale || o.breakStale === false) return { ok: false, held: true, why };
    if (!breakIfStale(file, seen)) return { ok: false, held: true, why };
  }
  return { ok: false, held: true, why: `${file} is busy` };
}
