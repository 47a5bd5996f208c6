// The TaskProlog's request FIFOs: one a job, `tasks` in the job's directory (stateDir/job-<id>, which only the job's
// user and root can enter), so that a user reaches only the FIFO of a job of their own: nobody can take, read or
// flood another user's requests, and a flood of one's own fills only one's own job's queue (task-serve.ts).
// A FIFO is made ahead of need (mkfifo is a process: never on a Prolog's path) in a directory only root can enter,
// held open read-write by the agent, and moved into the job's directory, a rename, as the agent answers the job's
// Prolog, after the job's state is written and before the answer: the job's first TaskProlog finds it there. A job
// whose Prolog the agent did not answer has none, and its TaskProlog runs gdrgate, as without an agent.
// The FIFO stays root's (mode 0666: the job's directory is the gate); the agent reads it until the path no longer
// leads to it (the Epilog removed the job's directory). An agent that stops moves its jobs' FIFOs back into its own
// directory (a TaskProlog meanwhile finds none and runs gdrgate at once, instead of waiting for an answer), and the
// next agent moves them back and reads them; it also takes over those a killed agent left in running jobs'
// directories (root's FIFOs only: no user can make one, and a user can link only their own job's).
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { Exec } from '../host/exec.js';
import { lstatOrNull } from '../host/files.js';
import { log } from '../log.js';
import { jobDirName, parseId, parseJobId } from '../state/names.js';
import { TASK_FIFO } from './task.js';

const MKFIFO = '/usr/bin/mkfifo';
/** Where FIFOs wait for their job: in stateDir, so that a rename moves one into a job's directory. */
export const POOL_DIR = '.task-fifos';
/** FIFOs made ahead: as many jobs as a node's GPUs, starting at once (their Prologs answered back to back), each find one. */
const POOL = 8;
/** Jobs read at once: beyond this, the oldest job's FIFO is let go (its TaskProlog runs gdrgate). */
const MAX_JOBS = 512;
/** How often the agent looks for jobs that ended (their directory gone), besides at each Prolog it answers. */
const SWEEP_MS = 30_000;
/** The agent's user: root on a node (the Prolog's). Asked each time: a startup snapshot keeps what its maker computed. */
const me = (): number => process.getuid?.() ?? 0;

type Serve = (fd: number, job: string) => { destroy(): void };
interface Held {
  readonly file: string;
  readonly fd: number;
  readonly ino: number;
}

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

  /** The FIFOs of running jobs taken over (those a stopped agent set aside put back), the pool made anew. */
  async start(): Promise<void> {
    // The world-writable FIFO of agents before these.
    const old = path.join(this.o.stateDir, TASK_FIFO);
    if (lstatOrNull(old)?.isFIFO()) fs.rmSync(old, { force: true });
    const pool = lstatOrNull(this.poolDir);
    if (pool !== null && (!pool.isDirectory() || pool.uid !== me() || (pool.mode & 0o077) !== 0)) fs.rmSync(this.poolDir, { recursive: true, force: true });
    fs.mkdirSync(this.poolDir, { recursive: true, mode: 0o700 });
    for (const name of fs.readdirSync(this.poolDir)) {
      const from = path.join(this.poolDir, name);
      const job = /^parked\.(.+)$/.exec(name)?.[1];
      const dir = job !== undefined && parseJobId(job) === job ? lstatOrNull(path.join(this.o.stateDir, jobDirName(job))) : null;
      try {
        if (job !== undefined && dir?.isDirectory()) fs.renameSync(from, path.join(this.o.stateDir, jobDirName(job), TASK_FIFO));
        else fs.rmSync(from, { recursive: true, force: true });
      } catch {
        fs.rmSync(from, { recursive: true, force: true });
      }
    }
    for (const name of fs.readdirSync(this.o.stateDir)) {
      const job = /^job-(.+)$/.exec(name)?.[1];
      if (job !== undefined && parseJobId(job) === job) this.adopt(job);
    }
    await this.fill();
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  /** Opens `file` without following a link, and keeps it only when it is a FIFO of the agent's user, root (fstat of what was opened). */
  private open(file: string): Held | null {
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
    } catch {
      return null;
    }
    const st = fs.fstatSync(fd);
    if (!st.isFIFO() || st.uid !== me()) {
      fs.closeSync(fd);
      return null;
    }
    return { file, fd, ino: st.ino };
  }

  private adopt(job: string): void {
    const file = path.join(this.o.stateDir, jobDirName(job), TASK_FIFO);
    const st = lstatOrNull(file);
    if (!st?.isFIFO() || st.uid !== me()) return;
    const h = this.open(file);
    if (h) this.serveJob(job, h);
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

  /** Tops the pool up to POOL FIFOs, one mkfifo at a time; a failure is logged and tried again at the next Prolog. */
  fill(): Promise<void> {
    this.filling ??= (async () => {
      try {
        while (!this.closed && this.pool.length < POOL) {
          const file = path.join(this.poolDir, `fifo.${process.pid}.${this.made++}`);
          const r = await this.o.exec.run(MKFIFO, ['-m', '666', file], { timeoutMs: 5000 });
          if (r.exitCode !== 0) throw new ConfigError(`${MKFIFO} ${file}: ${r.error ?? r.stderr.trim()}`);
          // Made while the agent stopped: not left behind.
          if (this.closed) {
            fs.rmSync(file, { force: true });
            break;
          }
          const h = this.open(file);
          if (h === null) throw new ConfigError(`${file}: not the FIFO mkfifo made`);
          this.pool.push(h);
        }
      } catch (e) {
        (await log()).warn({ why: (e as Error).message }, 'gdrgate agent: no TaskProlog FIFO made ahead; a job without one runs gdrgate in its TaskProlog');
      } finally {
        this.filling = null;
      }
    })();
    return this.filling;
  }

  /**
   * Gives the job of the Prolog whose environment is `env` its FIFO: called once its state is written (its directory
   * is the job's user's), before the answer. False when there is none to give or the directory is not the job's.
   */
  handOver(env: NodeJS.ProcessEnv): boolean {
    // After the answer is written: a mkfifo forked now would hold it up.
    setImmediate(() => {
      this.sweep();
      void this.fill();
    });
    const job = parseJobId(env.SLURM_JOB_ID);
    const uid = parseId(env.SLURM_JOB_UID);
    const h = this.pool.shift();
    if (h === undefined) return false;
    const dir = job === null ? null : lstatOrNull(path.join(this.o.stateDir, jobDirName(job)));
    if (job === null || uid === null || !dir?.isDirectory() || dir.uid !== uid) {
      this.pool.unshift(h);
      return false;
    }
    const file = path.join(this.o.stateDir, jobDirName(job), TASK_FIFO);
    try {
      // Whatever the user put at that name is replaced (a directory there makes this fail: the job runs gdrgate).
      fs.renameSync(h.file, file);
    } catch {
      fs.closeSync(h.fd);
      fs.rmSync(h.file, { force: true });
      return false;
    }
    // Read from the next turn: nothing is written into it before this Prolog ends (its job's first task comes after).
    setImmediate(() => (this.closed ? fs.closeSync(h.fd) : this.serveJob(job, { ...h, file })));
    return true;
  }

  /** Lets go of the FIFOs whose path no longer leads to them: the job ended (its directory removed) or the user moved it. */
  sweep(): void {
    for (const [job, j] of this.jobs) {
      if (lstatOrNull(j.file)?.ino === j.ino) continue;
      j.served.destroy();
      this.jobs.delete(job);
    }
  }

  /** At the agent's stop: its FIFOs made ahead removed (one being made too), the jobs' set aside for the next agent. */
  async destroy(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const [job, j] of this.jobs) {
      j.served.destroy();
      try {
        if (lstatOrNull(j.file)?.ino === j.ino) fs.renameSync(j.file, path.join(this.poolDir, `parked.${job}`));
      } catch {
        /* the job's directory went meanwhile */
      }
    }
    this.jobs.clear();
    for (const h of this.pool.splice(0)) {
      fs.closeSync(h.fd);
      fs.rmSync(h.file, { force: true });
    }
    await this.filling;
  }
}
