// Whether a lock's owner still runs (src/host/lock.ts judges staleness by it): its pid, and where the lock says when
// that process started, the same start, so a pid the kernel has since given to another process is not taken for it.
import fs from 'node:fs';
import { errno } from './files.js';

/** Whether a process with this pid exists (kill 0: EPERM means it exists but is not ours to signal). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errno(e) === 'EPERM';
  }
}

/**
 * A process's start time, in clock ticks since boot: /proc/<pid>/stat's 22nd field (proc(5)), counted after the
 * last ')' since the command name in field 2 may hold spaces and parentheses. Null where it cannot be read.
 */
export function startTicks(pid: number | 'self', proc = '/proc'): string | null {
  let text: string;
  try {
    text = fs.readFileSync(`${proc}/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  if (text.length > 4096) return null;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const v = fields[19];
  return v !== undefined && /^\d{1,20}$/.test(v) ? v : null;
}

let ownStart: string | null | undefined;

/** This process's start time (read once). */
export function ownStartTicks(): string | null {
  if (ownStart === undefined) ownStart = startTicks('self');
  return ownStart;
}

/**
 * Whether the lock's owner runs: `pid` alive and, where the lock recorded its start (`start`), still the process that
 * started then. A holder killed without releasing leaves its pid to be reused by any process, a user's too; by pid
 * alone its lock held off every drain until its age ran out.
 */
export function ownerRuns(pid: number, start: string | null, proc = '/proc'): boolean {
  if (!pidAlive(pid)) return false;
  if (start === null) return true;
  const now = startTicks(pid, proc);
  return now === null || now === start;
}
