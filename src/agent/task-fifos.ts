// The TaskProlog's request FIFOs: one a job, stateDir/tasks-<id>, the job's user's and mode 0600, in the state
// directory, which only root can change: a user reaches only the FIFO of a job of their own, can neither move nor
// replace it (nor mount over its directory), and a flood of one's own fills only one's own job's queue
// (task-serve.ts). Until 2026-12-04 every TaskProlog wrote into one FIFO of mode 0666 that any user could read.
// A FIFO is made ahead of need (mkfifo is a process: never on a Prolog's path) in a directory only root can enter,
// held open read-write by the agent, given to the job's user (fchown, fchmod: on what the agent holds, no path) and
// renamed into place once the agent, having answered the job's Prolog, has written the job's record, just before it
// hands the job's directory to the user: a TaskProlog that finds the directory its user's finds the FIFO there. A job whose Prolog the agent did not answer has none, and its TaskProlog
// runs gdrgate, as without an agent (so does a root job's: the agent never judges a root-owned job directory).
// The agent lets go of a FIFO, and removes it, once the job's directory is gone (the Epilog removes both). Stopping,
// it moves its jobs' FIFOs into its own directory (a TaskProlog meanwhile finds none and runs gdrgate at once), and the
// next agent moves them back; it also takes over those a killed agent left (only root makes names in stateDir).
// Nothing here may throw into the agent: every look at the file system is caught, and a doubt lets the FIFO go.
import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { Exec } from '../host/exec.js';
import { listNames, makeDirs, removeTree } from '../host/dirs.js';
import { lstat, rename, unlink, type Stats } from '../host/entries.js';
import { closeFd, fchmodFd, fchownFd, fstatFd, O_NOFOLLOW, O_NONBLOCK, O_RDWR, openFd } from '../host/fd.js';
import { quietly } from '../host/files.js';
import { log } from '../log.js';
import { HeldDir, type Look } from '../host/held-dir.js';
import { mountAt, mountsOrWhy } from '../host/mounts.js';
import { jobDirName, parseId, parseJobId, taskFifoName } from '../state/names.js';
import { TASK_FIFO } from './task.js';

const MKFIFO = '/usr/bin/mkfifo';
/** Where FIFOs wait for their job: in stateDir, so that a rename puts one in place. */
export const POOL_DIR = '.task-fifos';
/**
 * FIFOs made ahead. More than LOW are there whenever no refill is under way: as many jobs as a node's GPUs, starting at
 * once (their Prologs answered back to back), each find one. The pool is topped up only once it falls to LOW, all the
 * missing FIFOs made by one mkfifo: one process every POOL - LOW jobs, not one a job (a process costs the agent ~2-3 ms
 * of CPU on its one thread, which a Prolog that comes meanwhile waits for).
 */
const POOL = 16;
const LOW = 8;
/** Jobs read at once: beyond this, the oldest job's FIFO is let go (its TaskProlog waits AGENT_TIMEOUT, then runs gdrgate). */
const MAX_JOBS = 512;
/** How often the agent looks for jobs that ended (their directory gone), besides after each Prolog it answers. */
const SWEEP_MS = 30_000;

type Serve = (fd: number, job: string) => { destroy(): void };
interface Held {
  readonly file: string;
  readonly fd: number;
  readonly ino: number;
}

/** lstat, or null for anything but a plain answer (gone, unreadable, a mount that refuses root). */
function look(file: string): Stats | null {
  try {
    return lstat(file);
  } catch {
    return null;
  }
}

const found = (l: Look<Stats> | 'error'): l is Stats => l !== null && l !== 'mount' && l !== 'error';
const isDir = (l: Look<Stats> | 'error'): l is Stats => found(l) && l.isDirectory();

export class TaskFifos {
  private readonly pool: Held[] = [];
  private readonly jobs = new Map<string, { readonly file: string; readonly ino: number; readonly served: { destroy(): void } }>();
  private filling: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private made = 0;
  private closed = false;

  constructor(private readonly o: { readonly stateDir: string; readonly exec: Exec; readonly serve: Serve }) {}

  private get poolDir(): string {
    return path.join(this.o.stateDir, POOL_DIR);
  }
  private fifo(job: string): string {
    return path.join(this.o.stateDir, taskFifoName(job));
  }
  private jobDir(job: string): string {
    return path.join(this.o.stateDir, jobDirName(job));
  }

  /** The FIFOs of running jobs taken over (those a stopped agent set aside put back), the pool made anew. */
  async start(): Promise<void> {
    const top = HeldDir.of(this.o.stateDir);
    try {
      this.startIn(top);
    } finally {
      if (typeof top !== 'string') top.close();
    }
    await this.fill();
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  /** start()'s looks, in the state directory held (a string: it could not be; nothing of the jobs' is looked at). */
  private startIn(top: HeldDir | string): void {
    // The world-writable FIFO of agents before these.
    const old = typeof top === 'string' ? null : top.lookQuietly(TASK_FIFO);
    if (found(old) && old.isFIFO()) quietly(() => unlink(path.join(this.o.stateDir, TASK_FIFO)));
    const pool = look(this.poolDir);
    if (pool !== null && (!pool.isDirectory() || pool.uid !== me() || (pool.mode & 0o077) !== 0)) quietly(() => removeTree(this.poolDir));
    makeDirs(this.poolDir, 0o700);
    // A job's directory with a mount on it (its user's) is never looked into: its FIFO is neither put back nor read.
    // A state directory that cannot be held: no job's directory is looked at, no FIFO put back (its tasks run gdrgate).
    const open = (job: string): boolean => typeof top !== 'string' && isDir(top.lookQuietly(jobDirName(job)));
    for (const name of listNames(this.poolDir)) {
      const from = path.join(this.poolDir, name);
      const job = /^parked\.(.+)$/.exec(name)?.[1];
      // Only the agent puts names here: a FIFO each, back in place while its job runs, else removed (never recursively).
      if (job !== undefined && parseJobId(job) === job && open(job)) quietly(() => rename(from, this.fifo(job)));
      else quietly(() => unlink(from));
    }
    for (const name of listNames(this.o.stateDir)) {
      const job = /^tasks-(.+)$/.exec(name)?.[1];
      if (job !== undefined && parseJobId(job) === job && typeof top !== 'string') this.adopt(job, top);
    }
  }

  /** Opens `file` without following a link, and keeps it only when it is a FIFO with one name (fstat of what was opened). */
  private open(file: string, uid: number): Held | null {
    let fd: number;
    try {
      fd = openFd(file, O_RDWR | O_NONBLOCK | O_NOFOLLOW);
    } catch {
      return null;
    }
    const st = fstatFd(fd);
    if (!st.isFIFO() || st.uid !== uid || st.nlink !== 1) {
      closeFd(fd);
      return null;
    }
    return { file, fd, ino: st.ino };
  }

  /** A FIFO a killed agent left for a running job: read again; for a job that ended, removed. */
  private adopt(job: string, top: HeldDir): void {
    const file = this.fifo(job);
    const dir = top.lookQuietly(jobDirName(job));
    if (!isDir(dir)) {
      if (dir === null) quietly(() => unlink(file));
      return;
    }
    // Opened as looked at (a mount on the FIFO, its user's, never opened): a FIFO of the job's user with one name.
    let fd: Look<number> | string;
    try {
      fd = top.openAs(taskFifoName(job), O_RDWR, (st) => (st.isFIFO() && st.uid === dir.uid && st.nlink === 1 ? null : "not the job's FIFO"));
    } catch {
      return;
    }
    if (typeof fd === 'number') this.serveJob(job, { file, fd, ino: fstatFd(fd).ino });
  }

  private serveJob(job: string, h: Held): void {
    this.jobs.get(job)?.served.destroy();
    this.jobs.delete(job);
    if (this.jobs.size >= MAX_JOBS) {
      const [oldest, j] = this.jobs.entries().next().value!;
      j.served.destroy();
      this.jobs.delete(oldest);
    }
    this.jobs.set(job, { file: h.file, ino: h.ino, served: this.o.serve(h.fd, job) });
  }

  /**
   * Tops the pool up to POOL FIFOs once it holds LOW or fewer (at start: none), with one mkfifo for all the missing.
   * What a mkfifo that succeeded made is kept as opened (a FIFO, one name, the agent's); after a failed one all its
   * names are removed, since which of them it made cannot be told (a name already there is not its), and the next
   * Prolog tries again with new names. The promise is cleared on a later turn, never before it is stored.
   */
  fill(): Promise<void> {
    if (this.filling !== null) return this.filling;
    if (this.closed || this.pool.length > LOW) return Promise.resolve();
    const files = Array.from({ length: POOL - this.pool.length }, () => path.join(this.poolDir, `fifo.${process.pid}.${this.made++}`));
    this.filling = this.make(files).finally(() => {
      this.filling = null;
    });
    return this.filling;
  }

  private async make(files: readonly string[]): Promise<void> {
    try {
      await this.o.exec.ready?.(); // its 5 s are mkfifo's own, not module loading
      const r = await this.o.exec.run(MKFIFO, ['-m', '600', '--', ...files], { timeoutMs: 5000 });
      const made = r.exitCode === 0 && !this.closed ? files.map((f) => this.open(f, me())) : [];
      // Made while the agent stopped, by a failed mkfifo, or not what it made: not left behind.
      files.forEach((f, i) => {
        const h = made[i] ?? null;
        if (h !== null) this.pool.push(h);
        else quietly(() => unlink(f));
      });
      if (this.closed) return;
      if (r.exitCode !== 0) throw new ConfigError(`${MKFIFO}: ${r.error ?? r.stderr.trim()}`);
      const bad = made.findIndex((h) => h === null);
      if (bad >= 0) throw new ConfigError(`${files[bad]}: not the FIFO mkfifo made`);
    } catch (e) {
      (await log()).warn({ why: (e as Error).message }, 'gdrgate agent: no TaskProlog FIFO made ahead; a job without one runs gdrgate in its TaskProlog');
    }
  }

  /**
   * Gives the job of the Prolog whose environment is `env` its FIFO: called once its record is written, just before
   * its directory (this agent's still) is handed to the job's user, after the answer. Returns why not, or null.
   * `seen`: the mount table the record was written by (writePrologState: read in this same synchronous stretch). The
   * jobs that ended are let go by it too (sweep): their directories are looked at in that stretch, a few file writes
   * after the read, as a sweep of its own looks at them right after its read.
   */
  handOver(env: NodeJS.ProcessEnv, seen?: readonly string[]): string | null {
    const read = seen !== undefined ? { mounts: seen } : mountsOrWhy(this.o.stateDir);
    if ('why' in read) return read.why;
    if (this.jobs.size) this.sweep();
    // In a turn of its own: a mkfifo forked now would hold up the hand-over of the directory.
    setImmediate(() => void this.fill());
    const job = parseJobId(env.SLURM_JOB_ID);
    const uid = parseId(env.SLURM_JOB_UID);
    const gid = parseId(env.SLURM_JOB_GID);
    // A root job's TaskProlog the agent never judges (a root-owned job directory proves nothing of the user's).
    if (job === null || uid === null || uid === 0) return null;
    const mount = mountAt(read.mounts, this.jobDir(job));
    if (mount !== null) return `${mount} is a mount: not entered`;
    const dir = look(this.jobDir(job));
    if (!dir?.isDirectory() || (dir.uid !== uid && dir.uid !== me())) return `${this.jobDir(job)} is not a directory of uid ${uid} or of this agent's`;
    const h = this.pool.shift();
    if (h === undefined) return 'no FIFO made ahead';
    const file = this.fifo(job);
    try {
      fchownFd(h.fd, uid, gid ?? -1);
      fchmodFd(h.fd, 0o600);
      rename(h.file, file);
    } catch (e) {
      quietly(() => closeFd(h.fd));
      quietly(() => unlink(h.file));
      return `${file}: ${(e as Error).message}`;
    }
    // Read from the next turn: nothing is written into it before the directory is the user's, later in this turn.
    setImmediate(() => (this.closed ? quietly(() => closeFd(h.fd)) : this.serveJob(job, { ...h, file })));
    return null;
  }

  /**
   * Lets go of the FIFOs of jobs that ended (their directory gone: removed with it) or whose name leads elsewhere. A
   * job whose directory or FIFO has a mount on it (its user's FUSE?) is let go too, never looked into.
   */
  sweep(): void {
    if (!this.jobs.size) return;
    const top = HeldDir.of(this.o.stateDir);
    // A state directory that cannot be held: no job's directory is looked at this time (the next sweep tries again).
    if (typeof top === 'string') return;
    try {
      for (const [job, j] of this.jobs) {
        const dir = top.lookQuietly(jobDirName(job));
        const fifo = top.lookQuietly(taskFifoName(job));
        const ours = found(fifo) && fifo.ino === j.ino;
        if (dir !== 'mount' && dir !== null && ours) continue;
        j.served.destroy();
        this.jobs.delete(job);
        if (dir === null && ours) quietly(() => unlink(j.file));
      }
    } finally {
      top.close();
    }
  }

  /** At the agent's stop: its FIFOs made ahead removed (one being made too), the jobs' set aside for the next agent. */
  async destroy(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const top = HeldDir.of(this.o.stateDir);
    for (const [job, j] of this.jobs) {
      j.served.destroy();
      // stateDir and the pool are root's: what is renamed is what was looked at (a mount on it never looked into).
      const f = typeof top === 'string' ? null : top.lookQuietly(taskFifoName(job));
      if (found(f) && f.ino === j.ino) quietly(() => rename(j.file, path.join(this.poolDir, `parked.${job}`)));
    }
    if (typeof top !== 'string') top.close();
    this.jobs.clear();
    for (const h of this.pool.splice(0)) {
      quietly(() => closeFd(h.fd));
      quietly(() => unlink(h.file));
    }
    await this.filling;
  }
}

/** The agent's user: root on a node (the Prolog's). Asked each time: a startup snapshot keeps what its maker computed. */
function me(): number {
  return process.getuid?.() ?? 0;
}
