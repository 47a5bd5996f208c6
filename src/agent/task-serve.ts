// The agent's TaskProlog side: requests from one job's FIFO (task-fifos.ts: only the job's user can reach it), judged
// in a queue of that job's own, never the Prolog's nor another job's: a user who floods the FIFO, or asks to be
// answered into a pipe nobody reads, delays only their own job's TaskProlog answers, and a TaskProlog that gets none in
// time runs gdrgate itself. A request for another job is dropped. At most MAX_TASKS_PENDING requests wait, one per
// asking process (the rest are dropped, counted, said once), and an answer is written at once into the asking
// process's pipe, or given up after REPLY_MS. The queues share one thread: what all of one user's jobs may have of
// it is TASK_BUDGET, a request judged or a line that is none of this job's (or a read that ends no line) costing a
// turn; past it the rest of their lines dropped unparsed and their FIFO left unread for a turn (each TaskProlog so
// refused runs gdrgate in its own job).
import net from 'node:net';
import { fstatFd } from '../host/fd.js';
import type { Host } from '../host/host.js';
import { log } from '../log.js';
import type { IdleGc } from './idle-gc.js';
import { pipeOf, replyAll } from './reply.js';
import { answerTask, formatTaskReply, parseTaskRequest, type TaskAnswer } from './task.js';

/** A step's first tasks on one node ask at once (one per view): 8 GPUs' worth, twice. */
export const MAX_TASKS_PENDING = 16;
/** A TaskProlog reads its answer as soon as it comes (bash `read -N`): a pipe still full after this is not read. */
export const REPLY_MS = 250;

/**
 * The TaskProlog requests one user may have judged by the agent, over all their jobs: a burst (a step's first tasks on a
 * node ask at once, one per view; several steps at once) and a steady rate after it. Without it, one user's jobs
 * flooding with proven requests held the one thread, and other jobs' Prologs fell back to Node (the review of e8e7aec:
 * ten such jobs, other jobs' Prologs from 26-52 ms to 1-1.8 s). A turn pays for `turnMs` of the thread; a request that
 * held it longer pays a turn for each `turnMs` more after it (its facts are the user's to write, up to 256 KiB: one that
 * large took ~40-250 ms to read and parse where a node's ~8 KiB takes ~1.5 ms, and the count alone let such requests
 * keep the thread busy).
 */
export const TASK_BUDGET = { burst: 64, perSecond: 16, turnMs: 4 } as const;

type Budget = { readonly burst: number; readonly perSecond: number; readonly turnMs?: number };

/** A token bucket a uid, shared by every job's queue. */
export class TaskBudget {
  private readonly by = new Map<number, { tokens: number; at: number }>();
  constructor(private readonly b: Budget = TASK_BUDGET) {}

  /** `uid`'s tokens now (refilled since last seen). */
  private now(uid: number, now: number): number {
    const was = this.by.get(uid) ?? { tokens: this.b.burst, at: now };
    return Math.min(this.b.burst, was.tokens + ((now - was.at) / 1000) * this.b.perSecond);
  }

  /** Whether `uid` may have one more request judged now (and counts it). */
  take(uid: number, now = performance.now()): boolean {
    const tokens = this.now(uid, now);
    const ok = tokens >= 1;
    this.by.set(uid, { tokens: ok ? tokens - 1 : tokens, at: now });
    return ok;
  }

  /**
   * Charges `uid` for a request of theirs that held the thread `ms`: past the turn take() counted, one more a `turnMs`,
   * at most a burst's worth (the bucket may go below zero: their next requests wait until it has refilled).
   */
  spend(uid: number, ms: number, now = performance.now()): void {
    const more = Math.min(this.b.burst, Math.floor(ms / (this.b.turnMs ?? TASK_BUDGET.turnMs)));
    if (more > 0) this.by.set(uid, { tokens: this.now(uid, now) - more, at: now });
  }
}

/** Reads `job`'s task requests from `fd` (its FIFO, opened read-write) until destroyed; its owner's requests count against `budget`. */
export function serveTasks(fd: number, o: { readonly config: string; readonly live: Host; readonly stopping: () => boolean; readonly upgraded?: () => string | null; readonly job: string; readonly budget: TaskBudget; readonly idle?: IdleGc }): { destroy(): void } {
  // The FIFO is the job user's (task-fifos.ts hands it over with fchown before it is read).
  const uid = fstatFd(fd).uid;
  const input = new net.Socket({ fd, readable: true, writable: false });
  let queue = Promise.resolve();
  let pending = 0;
  let dropped = 0;
  let partial = '';
  /** The askers waiting now (pid:fd): a TaskProlog asks once, so one process's second request is a flood's. */
  const asking = new Set<string>();
  /** Left unread for a turn of the budget: what the user writes meanwhile waits in their own pipe, then blocks them. */
  let resting = false;
  const rest = (): void => {
    if (resting) return;
    resting = true;
    input.pause();
    setTimeout(() => ((resting = false), input.resume()), Math.ceil(1000 / TASK_BUDGET.perSecond)).unref();
  };
  input.setEncoding('utf8');
  input.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    // What ends no line costs a turn too (bytes with no newline: the review of 07e7c19 read 3.2 GB of /dev/zero in 3 s
    // for no turn), and more than a request can hold is dropped and the FIFO rests.
    if (partial.length > 8192 || (lines.length === 0 && !o.budget.take(uid))) {
      dropped++;
      partial = '';
      rest();
      return;
    }
    for (let k = 0; k < lines.length; k++) {
      // A line that is no request of this job (blank, malformed, another job's) costs its user a turn of the budget
      // (the review of a3c23a3: `yes x` into one's own FIFO held the thread, a fifth of other jobs' Prologs fell back
      // to Node), as a request judged does; past it the rest of what was read is dropped and the FIFO rests. A request
      // dropped for a full queue or a process asking again costs none: the user's other jobs keep their turns.
      const line = lines[k]!;
      const req = line ? parseTaskRequest(line) : null;
      const mine = req?.ok === true && req.value.job === o.job;
      if (!mine && !o.budget.take(uid)) {
        dropped += lines.length - k;
        partial = '';
        rest();
        break;
      }
      if (!req?.ok) continue;
      if (req.value.job !== o.job) {
        dropped++;
        continue;
      }
      const who = `${req.value.pid}:${req.value.fd}`;
      if (pending >= MAX_TASKS_PENDING || asking.has(who) || !o.budget.take(uid)) {
        dropped++;
        continue;
      }
      pending++;
      o.idle?.began();
      asking.add(who);
      queue = queue
        .then(async () => {
          const pipe = pipeOf(req.value);
          if (pipe === null || o.stopping()) return;
          const asked = { req: req.value, pipe };
          const t0 = performance.now();
          const judged = await answerTask(req.value, o.config, o.live).catch((e: Error): TaskAnswer => ({ ok: false, why: `the agent could not judge: ${e.message}` }));
          // What it held the thread for (awaits included: what others did meanwhile is a little more, never less).
          o.budget.spend(uid, performance.now() - t0);
          // Code changed on disk since the start (an upgrade): no answer of the old code's, as for a Prolog (serve.ts).
          const changed = !judged.ok && judged.silent ? null : (o.upgraded?.() ?? null);
          const a: TaskAnswer = changed === null ? judged : { ok: false, why: changed };
          if (!a.ok && a.silent) {
            (await log()).warn({ client: req.value.pid, job: req.value.job, why: a.why }, 'gdrgate agent: TaskProlog request not answered');
            return;
          }
          const sent = await replyAll(asked, formatTaskReply(req.value.nonce, a), REPLY_MS);
          // One line per view judged (a step's first task): whether the agent answered, or why gdrgate judges instead.
          const ms = Math.round((performance.now() - t0) * 10) / 10;
          (await log())[sent ? 'info' : 'warn']({ client: req.value.pid, job: req.value.job, ms, ...(a.ok ? { exitCode: a.code } : { why: a.why }) }, sent ? (a.ok ? 'gdrgate agent: TaskProlog answered' : 'gdrgate agent: TaskProlog left to gdrgate') : 'gdrgate agent: the TaskProlog stopped waiting before the answer');
        })
        .catch(() => undefined)
        .then(async () => {
          asking.delete(who);
          o.idle?.ended();
          if (--pending > 0 || dropped === 0) return;
          (await log()).warn({ dropped }, `gdrgate agent: dropped ${dropped} TaskProlog request(s): more than ${MAX_TASKS_PENDING} waiting, a process asking again, a request for another job, or past the user's budget (${TASK_BUDGET.burst} at once, ${TASK_BUDGET.perSecond} a second; a TaskProlog that asked runs gdrgate)`);
          dropped = 0;
        })
        .catch(() => undefined);
    }
  });
  input.on('error', () => undefined);
  return { destroy: () => input.destroy() };
}
