// gdrgate agent: a resident gate that answers the Prolog's "is this node healthy?" so that a passing Prolog costs
// a shell, one FIFO round trip and the checks, not a Node start. It reads the node anew for every request (nothing
// is cached between requests: config, baseline, sysfs and the Prolog's own limits are read each time), answers only
// "healthy", and never drains: every other verdict goes back to the Prolog, which runs the gate in its own process.
// Requests come through a FIFO in a directory only the agent's user can enter (protocol.ts; slurm/prolog.sh).
import net from 'node:net';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { log, setLogFile } from '../log.js';
import { agentProlog, type AgentAnswer } from '../engine/prolog.js';
import { listNames, makeDirs } from '../host/dirs.js';
import { lstat, removeFile, rename, stat } from '../host/entries.js';
import { ExecaExec, type Exec } from '../host/exec.js';
import { O_NONBLOCK, O_RDWR, openFd } from '../host/fd.js';
import { assertSafeAbove } from '../host/files.js';
import { FsHost } from '../host/fs-host.js';
import { ReadAhead, readAheadWorkerFile } from '../host/read-ahead.js';
import { untrustedReason } from '../host/trust.js';
import { readText } from '../host/whole-file.js';
import { replaceAtomically } from '../state/store.js';
import { notAProlog } from './client.js';
import { formatReply, parseEnviron, parseRequest, PID_FILE, REQUEST_FIFO } from './protocol.js';
import { pipeOf, reply, waiting, type Asked } from './reply.js';
import { TaskFifos } from './task-fifos.js';
import { idleGc } from './idle-gc.js';
import { serveTasks, TaskBudget } from './task-serve.js';
import { loadTrustedConfig } from '../config.js';
import { ensureStateDir } from '../state/store.js';

const MKFIFO = '/usr/bin/mkfifo';

export interface AgentOptions {
  /** The directory holding the request FIFO and the pid file (mode 0700). */
  readonly dir: string;
  /** The config this agent answers for; a request naming another gets "fallback". */
  readonly config: string;
  /** Files whose identity (inode, size, mtime, ctime) at start is this agent's code: when one changes, the agent exits. */
  readonly watch: readonly string[];
}

/**
 * Whoever can write a request can make the agent read: the directory must be closed to everyone else (0700), and it
 * and every directory above it changeable by root (or the agent's user) only, as the gate's own files (host/trust).
 */
function checkDir(dir: string): void {
  try {
    assertSafeAbove(dir); // nothing made where another user could re-point the path
  } catch (e) {
    throw new ConfigError(`agent directory: ${(e as Error).message}`);
  }
  makeDirs(dir, 0o700);
  const st = lstat(dir);
  if (!st.isDirectory()) throw new ConfigError(`agent directory ${dir} is not a directory`);
  const why = untrustedReason(dir, process.getuid?.() ?? 0);
  if (why) throw new ConfigError(`agent directory: ${why}`);
  if ((st.mode & 0o077) !== 0) throw new ConfigError(`agent directory ${dir} has mode ${(st.mode & 0o777).toString(8)}; want 700`);
}

/** A file's identity: ctime too, which no write can keep (a copy over it with `cp -p` keeps inode, size and mtime). */
const identity = (f: string): string => {
  try {
    const st = stat(f);
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch (e) {
    return `missing: ${(e as NodeJS.ErrnoException).code ?? 'error'}`;
  }
};

/**
 * Made under another name and renamed over `file`, which replaces whatever is there at once: an old agent's FIFO (it
 * may hold requests nobody will answer), or a plain file that a Prolog's open made while no FIFO was there (bash's
 * `<>` creates). Removed first and made there, such a file could come between the removal and the mkfifo.
 */
async function makeFifo(file: string, exec: Exec): Promise<void> {
  const made = `${file}.new`;
  removeFile(made);
  await exec.ready?.(); // its 5 s are mkfifo's own, not a loaded node's module loading (as umount's, host/mounts.ts)
  const r = await exec.run(MKFIFO, ['-m', '600', made], { timeoutMs: 5000 });
  if (r.exitCode !== 0) throw new ConfigError(`${MKFIFO} ${made}: ${r.error ?? r.stderr.trim()}`);
  rename(made, file);
}

/** Runs until SIGTERM/SIGINT (exit 0) or until its code changes on disk (exit 0, after answering "fallback"). */
export async function serveAgent(o: AgentOptions, exec: Exec = new ExecaExec()): Promise<number> {
  const dir = path.resolve(o.dir);
  const config = path.resolve(o.config);
  checkDir(dir);
  const fifo = path.join(dir, REQUEST_FIFO);
  const pidFile = path.join(dir, PID_FILE);
  const watched = new Map(o.watch.map((f) => [f, identity(f)]));
  // Reply FIFOs that Prolog wrappers of protocol v1 (before the reply pipe) left behind: nobody reads them now.
  for (const f of listNames(dir)) if (f.startsWith('reply.')) removeFile(path.join(dir, f));
  await makeFifo(fifo, exec);
  const fifoIno = stat(fifo).ino;
  // O_RDWR: the agent is always a writer too, so the FIFO never reports end-of-file between Prologs.
  const fd = openFd(fifo, O_RDWR | O_NONBLOCK);
  // The TaskProlog's FIFOs: one a job, in the job's directory (task-fifos.ts), given as the agent answers its Prolog.
  // None when the config cannot be read, or anyone but root could change it (every Prolog refuses such a config too;
  // the agent must not act on its stateDir as root before that).
  const stateDir = await loadTrustedConfig(config).then((c) => c.stateDir, () => null);
  const live = new FsHost('/');
  let stopping = false;
  const budget = new TaskBudget();
  const idle = idleGc();
  const fifos = stateDir === null ? null : new TaskFifos({ stateDir, exec, serve: (tfd, job) => serveTasks(tfd, { config, live, stopping: () => stopping, upgraded: () => upgraded(), job, budget, idle }) });
  if (fifos !== null && stateDir !== null) {
    ensureStateDir(stateDir);
    await fifos.start();
  }
  // PCI config space read ahead by a worker thread as each Prolog's request arrives (host/read-ahead.ts).
  const readAhead = await ReadAhead.start(readAheadWorkerFile(), { onBroken: (why) => void log().then((l) => l.warn({ why }, 'gdrgate agent: config space read in place from now on')) });
  replaceAtomically(dir, PID_FILE, `${process.pid}\n`, 0o600);
  // The agent's own lines go to stderr (its service's journal); each answered Prolog's run line to the config's log file.
  setLogFile(undefined);
  (await log()).info({ dir, config, ...(readAhead.broken === null ? {} : { readAhead: `none: ${readAhead.broken}` }) }, 'gdrgate agent listening');

  // One request at a time, in arrival order (the data handler below chains them).
  let queue = Promise.resolve();
  let done: (code: number) => void = () => {};
  const finished = new Promise<number>((res) => (done = res));
  const stop = async (why: string, exit: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    // Remove only what is still ours: a newer agent may already have made its own FIFO and pid file.
    try {
      if (stat(fifo).ino === fifoIno) removeFile(fifo);
      if (readText(pidFile).trim() === String(process.pid)) removeFile(pidFile);
    } catch {
      /* already gone */
    }
    // A request being answered finishes first (within 5 s): a job answered a moment ago gets its record.
    await Promise.race([queue, new Promise((r) => setTimeout(r, 5000).unref())]);
    await readAhead.close();
    setLogFile(undefined);
    (await log()).info({ dir, why }, 'gdrgate agent stopped');
    done(exit);
  };

  /** Why not to answer with this code: a watched file changed since the start (the agent then stops, once); else null. */
  const upgraded = (): string | null => {
    const changed = [...watched].find(([f, id]) => identity(f) !== id);
    if (!changed) return null;
    setImmediate(() => void stop(`${changed[0]} changed since the agent started`, 0));
    return `gdrgate changed on disk since the agent started (${changed[0]}); the agent exits for its service manager to restart it`;
  };

  /** The reply for `req`; null when the answer was delivered already (healthy: the agent's run delivers it itself). */
  const answer = async (asked: Asked): Promise<string | null> => {
    const req = asked.req;
    if (stopping) return formatReply('fallback', 'the agent is stopping');
    if (req.config !== config) return formatReply('fallback', `the agent answers for ${config}, not ${req.config}`);
    const changed = upgraded();
    if (changed !== null) return formatReply('fallback', changed);
    const why = await notAProlog(live, req.pid);
    if (why) return formatReply('fallback', why);
    // The Prolog is a live process whatever root the config reads: its environment comes from the live /proc.
    const environ = await live.readBytes(`/proc/${req.pid}/environ`, 1 << 20);
    if (!environ.ok) return formatReply('fallback', `cannot read /proc/${req.pid}/environ: ${environ.reason}`);
    const env = parseEnviron(Buffer.from(environ.value));
    let a: AgentAnswer;
    readAhead.begin();
    try {
      // The job's TaskProlog FIFO goes in place once its record is written (after the answer), before the directory is
      // the job user's: a task that finds the directory its own finds the FIFO too (slurm/taskprolog.sh waits for it).
      const handOver = (e: NodeJS.ProcessEnv, mounts: readonly string[]): void => {
        const why = fifos?.handOver(e, mounts) ?? null;
        if (why !== null) setImmediate(() => void log().then((l) => l.warn({ client: req.pid, why }, 'gdrgate agent: no TaskProlog FIFO for this job (its TaskProlog runs gdrgate)')));
      };
      a = await agentProlog(config, { env, startup: 'agent', selfPid: req.pid, handOver, readAhead: (h) => readAhead.wrap(h) }, () => waiting(asked), (line) => reply(asked, formatReply('ok', line)));
    } catch (e) {
      a = { healthy: false, why: `internal-error: ${(e as Error).message}` };
    } finally {
      setLogFile(undefined); // reopened by the next request: a rotated log file is followed
    }
    if (!a.healthy) return formatReply('fallback', a.why);
    if (!a.delivered) (await log()).warn({ client: req.pid }, 'gdrgate agent: the Prolog stopped waiting before the answer');
    return null;
  };

  let pending = 0;
  let dropped = 0;
  /** Counted, and said once the queue is empty: after a stop, a thousand stale lines make one log line. */
  const settle = async (): Promise<void> => {
    idle.ended();
    if (--pending > 0 || dropped === 0) return;
    (await log()).warn({ dropped }, `gdrgate agent: dropped ${dropped} request(s): the Prolog stopped waiting before the answer`);
    dropped = 0;
  };
  let partial = '';
  const input = new net.Socket({ fd, readable: true, writable: false });
  input.setEncoding('utf8');
  input.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    if (partial.length > 8192) partial = ''; // no newline for that long: not a Prolog's request
    for (const line of lines) {
      if (!line) continue;
      // One request at a time, in arrival order; a request that fails must not stop the ones after it.
      pending++;
      idle.began();
      queue = queue
        .then(async () => {
          const req = parseRequest(line);
          if (!req.ok) {
            (await log()).warn({ why: req.error }, 'gdrgate agent: request ignored');
            return;
          }
          // Its Prolog timed out and went on (it closed its reply pipe): judging now would be for nobody.
          const pipe = pipeOf(req.value);
          if (pipe === null) {
            dropped++;
            return;
          }
          const asked = { req: req.value, pipe };
          const text = await answer(asked);
          if (text !== null && !reply(asked, text)) (await log()).warn({ client: req.value.pid }, 'gdrgate agent: the Prolog stopped waiting before the answer');
        })
        .catch((e: Error) => void log().then((l) => l.error({ why: e.message }, 'gdrgate agent: request failed; its Prolog judges itself after its timeout')))
        .then(settle)
        .catch(() => undefined);
    }
  });
  input.on('error', (e: Error) => void stop(`request FIFO: ${e.message}`, 1));
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => void stop(sig, 0));
  const exit = await finished;
  input.destroy();
  await fifos?.destroy();
  return exit;
}
