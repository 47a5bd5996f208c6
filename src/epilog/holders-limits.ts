// How far the Epilog's look for processes holding a probed device goes (holders.ts): a module of its own, since the
// Epilog's deadline (engine/hook.ts) counts the look's time and the Prolog's bundle should not carry the look.
export interface ScanLimits {
  /** Processes looked at (/proc's numeric entries). */
  readonly processes: number;
  /** fd links read, over the processes that could count (their fd directories' entries). */
  readonly fds: number;
  /** Wall time of the whole look. */
  readonly ms: number;
}

/** Above a large node's count (pid_max allows millions; a busy 2-socket GPU node runs a few thousand). */
export const SCAN_LIMITS: ScanLimits = { processes: 65_536, fds: 1_000_000, ms: 2_000 };
