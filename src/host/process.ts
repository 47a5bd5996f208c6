// Whether a lock's owner still runs (src/host/lock.ts judges staleness by it).
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
