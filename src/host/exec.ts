// Runs external commands: absolute path, argument array, no shell, a timeout each, never throws.
import { isAbsolute } from 'node:path';

export interface ExecResult {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  /** Spawn failure (ENOENT, EACCES) or signal, in words. */
  readonly error: string | null;
  readonly durationMs: number;
}

export interface ExecOptions {
  readonly timeoutMs: number;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * A setpriv (util-linux 2.33+) to start the command under with `--pdeathsig KILL`: the kernel kills it when the gate's
   * process dies, even by SIGKILL (the wrappers' hard bound, the OOM killer), which no handler of ours outlives. Long
   * commands (the Epilog's probes: a perftest server waits in accept() for ever) are started so.
   */
  readonly tieTo?: string | undefined;
}

export interface Exec {
  run(file: string, args: readonly string[], opts: ExecOptions): Promise<ExecResult>;
  /** Loads what run() needs, so that a caller's time budget counts the commands, not module loading. */
  ready?(): Promise<void>;
}

/** How long past its timeout a killed command may take to hand back its pipes before we stop waiting. */
export const EXEC_GRACE_MS = 500;

/** Process groups of commands still running. The gate may end (its deadline, an error) while one runs: they die with it. */
const live = new Set<number>();
let reaperInstalled = false;
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
function track(pid: number): void {
  if (!reaperInstalled) {
    reaperInstalled = true;
    // 'exit' handlers run synchronously even on process.exit(): a detached child is not left behind.
    process.once('exit', () => live.forEach(killGroup));
  }
  live.add(pid);
}

/** The real one, on execa. A hung child (and what it forked) is killed as a process group at the timeout. */
export class ExecaExec implements Exec {
  async ready(): Promise<void> {
    await import('execa');
  }

  async run(file: string, args: readonly string[], opts: ExecOptions): Promise<ExecResult> {
    const t0 = performance.now();
    const done = (r: Omit<ExecResult, 'durationMs'>): ExecResult => ({ ...r, durationMs: Math.round(performance.now() - t0) });
    // The timeout counts from this call, not from the child's start: loading execa and spawning take seconds on a
    // loaded node, and a deadline the caller derived its timeout from must still hold.
    const until = t0 + opts.timeoutMs;
    if (!isAbsolute(file)) return done({ exitCode: null, stdout: '', stderr: '', timedOut: false, error: `not an absolute path: ${file}` });
    const { execa } = await import('execa');
    if (performance.now() >= until) return done({ exitCode: null, stdout: '', stderr: '', timedOut: true, error: `timed out after ${opts.timeoutMs} ms (before it started)` });
    const [f, a] = opts.tieTo ? [opts.tieTo, ['--pdeathsig', 'KILL', '--', file, ...args]] : [file, [...args]];
    const child = execa(f, a, {
      reject: false,
      shell: false,
      stdin: 'ignore',
      detached: true, // own process group: a timeout kills grandchildren holding our pipes too
      env: opts.env ? { ...opts.env } : undefined,
      extendEnv: opts.env === undefined,
      maxBuffer: 4 * 1024 * 1024,
    });
    const pid = child.pid;
    if (pid) track(pid);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, Math.max(0, until - performance.now()));
    // Never wait past the timeout plus a grace period, even if a pipe stays open.
    const grace = new Promise<'grace'>((res) => setTimeout(() => res('grace'), Math.max(0, until + EXEC_GRACE_MS - performance.now())).unref());
    const r = await Promise.race([child, grace]);
    clearTimeout(timer);
    // Exited: forget it. Past the grace it was killed and something still holds a pipe: kill the group again at exit.
    if (pid && r !== 'grace') live.delete(pid);
    if (r === 'grace') return done({ exitCode: null, stdout: '', stderr: '', timedOut: true, error: `no exit ${opts.timeoutMs + EXEC_GRACE_MS} ms after start` });
    const error = timedOut ? `timed out after ${opts.timeoutMs} ms` : r.failed && r.exitCode === undefined ? (r.shortMessage ?? 'failed') : null;
    return done({ exitCode: r.exitCode ?? null, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), timedOut, error });
  }
}
