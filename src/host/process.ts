// Small facts about errors and processes that the lock files (epilog probes, sample spool) share.

/** The errno name of a failed system call (`ENOENT`, `EEXIST`), or EUNKNOWN for anything else thrown. */
export function errnoCode(e: unknown): string {
  return e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : 'EUNKNOWN';
}

/** Whether a process with this pid exists (kill 0: EPERM means it exists but is not ours to signal). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoCode(e) === 'EPERM';
  }
}
