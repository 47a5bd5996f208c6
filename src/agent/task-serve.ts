// The agent's TaskProlog side: requests from the task FIFO, which every user may write (agent/task.ts says why that is
// safe), judged in a queue of their own, never the Prolog's: a user who floods the FIFO, or asks to be answered into
// a pipe nobody reads, delays only TaskProlog answers, and a TaskProlog that gets none in time runs gdrgate itself.
// At most MAX_TASKS_PENDING requests wait, one per asking process (the rest are dropped, counted, said once), and an
// answer is written at once into the asking process's pipe, or given up after REPLY_MS.
import fs from 'node:fs';
import net from 'node:net';
import type { Host } from '../host/host.js';
import { log } from '../log.js';
import { replyPath, type Request } from './protocol.js';
import { answerTask, formatTaskReply, parseTaskRequest, type TaskAnswer } from './task.js';

/** A step's first tasks on one node ask at once (one per view): 8 GPUs' worth, twice. */
export const MAX_TASKS_PENDING = 16;
/** A TaskProlog reads its answer as soon as it comes (bash `read -N`): a pipe still full after this is not read. */
export const REPLY_MS = 250;

/** The inode of the pipe the asking process's reply descriptor holds now; null when it holds none. */
export function pipeOf(req: Pick<Request, 'pid' | 'fd'>): number | null {
  try {
    const m = /^pipe:\[(\d+)\]$/.exec(fs.readlinkSync(replyPath(req.pid, req.fd)));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * A request and the pipe its asker held when the agent took it. The asker still waits while that same pipe is
 * there (it closes it when it stops waiting): a pipe of another process that got the pid since is not the one that
 * asked, and never gets this answer.
 */
export interface Asked<R extends Pick<Request, 'pid' | 'fd'> = Request> {
  readonly req: R;
  readonly pipe: number;
}
export const waiting = (a: Asked<Pick<Request, 'pid' | 'fd'>>): boolean => pipeOf(a.req) === a.pipe;

/** An answer, which may be longer than PIPE_BUF, written into that same pipe for at most `ms`; false when it did not all go. */
export async function replyAll(a: Asked<Pick<Request, 'pid' | 'fd'>>, text: string, ms = REPLY_MS): Promise<boolean> {
  const req = a.req;
  let fd: number;
  try {
    if (!waiting(a)) return false;
    fd = fs.openSync(replyPath(req.pid, req.fd), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFIFO() || st.ino !== a.pipe) return false;
    const buf = Buffer.from(text);
    const until = performance.now() + ms;
    for (let at = 0; at < buf.length; ) {
      try {
        at += fs.writeSync(fd, buf, at);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || performance.now() > until) return false;
        await new Promise((r) => setTimeout(r, 2));
      }
    }
    return true;
  } catch {
    return false;
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads task requests from `fd` (the task FIFO, opened read-write) until destroyed. */
export function serveTasks(fd: number, o: { readonly config: string; readonly live: Host; readonly stopping: () => boolean }): { destroy(): void } {
  const input = new net.Socket({ fd, readable: true, writable: false });
  let queue = Promise.resolve();
  let pending = 0;
  let dropped = 0;
  let partial = '';
  /** The askers waiting now (pid:fd): a TaskProlog asks once, so one process's second request is a flood's. */
  const asking = new Set<string>();
  input.setEncoding('utf8');
  input.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    if (partial.length > 8192) partial = '';
    for (const line of lines) {
      if (!line) continue;
      const req = parseTaskRequest(line);
      if (!req.ok) continue;
      const who = `${req.value.pid}:${req.value.fd}`;
      if (pending >= MAX_TASKS_PENDING || asking.has(who)) {
        dropped++;
        continue;
      }
      pending++;
      asking.add(who);
      queue = queue
        .then(async () => {
          const pipe = pipeOf(req.value);
          if (pipe === null || o.stopping()) return;
          const asked = { req: req.value, pipe };
          const t0 = performance.now();
          const a = await answerTask(req.value, o.config, o.live).catch((e: Error): TaskAnswer => ({ ok: false, why: `the agent could not judge: ${e.message}` }));
          if (!a.ok && a.silent) {
            (await log()).warn({ client: req.value.pid, job: req.value.job, why: a.why }, 'gdrgate agent: TaskProlog request not answered');
            return;
          }
          const sent = await replyAll(asked, formatTaskReply(req.value.nonce, a));
          // One line per view judged (a step's first task): whether the agent answered, or why gdrgate judges instead.
          const ms = Math.round((performance.now() - t0) * 10) / 10;
          (await log())[sent ? 'info' : 'warn']({ client: req.value.pid, job: req.value.job, ms, ...(a.ok ? { exitCode: a.code } : { why: a.why }) }, sent ? (a.ok ? 'gdrgate agent: TaskProlog answered' : 'gdrgate agent: TaskProlog left to gdrgate') : 'gdrgate agent: the TaskProlog stopped waiting before the answer');
        })
        .catch(() => undefined)
        .then(async () => {
          asking.delete(who);
          if (--pending > 0 || dropped === 0) return;
          (await log()).warn({ dropped }, `gdrgate agent: dropped ${dropped} TaskProlog request(s): more than ${MAX_TASKS_PENDING} waiting, or a process asking again (a TaskProlog that asked runs gdrgate)`);
          dropped = 0;
        })
        .catch(() => undefined);
    }
  });
  input.on('error', () => undefined);
  return { destroy: () => input.destroy() };
}
