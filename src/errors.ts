// The error classes that decide exit codes (runner/exit.ts): usage or configuration (2) versus the tool itself (3).
/** A flag, a file the user named, or a refused request: the caller can fix it. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
/** A root (a directory or a snapshot file) that cannot be opened: the CLI says `--root <path>: <detail>`; a caller that names the file its own way (the fleet view) takes `path` and `detail`. */
export class RootError extends UsageError {
  constructor(readonly path: string, readonly detail: string) {
    super(`--root ${path}: ${detail}`);
  }
}
/** The config or baseline is wrong (schema, trust, no matching class): an admin fixes it; never a drain by itself. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
/** A synchronous phase found the run's deadline passed (runner/deadline.ts). */
export class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
}
/** The output could not be delivered whole (its reader went away): the command failed, the node did not. */
export class OutputCut extends Error {
  override readonly name = 'OutputCut';
}

/** The node holds more of something than the gate reads within its deadline (inventory/limits.ts): could not tell. */
export class LimitError extends Error {
  override readonly name = 'LimitError';
}

/** Something the whole judgement rests on (the node's list of PCI functions, of RDMA adapters) could not be read:
 * not absent, unreadable. Could not tell: an internal error the policy fails open on, never an empty node judged. */
export class Unreadable extends Error {
  override readonly name = 'Unreadable';
}
