// The agent's TaskProlog side: requests from one job's FIFO (task-fifos.ts: only the job's user can reach it), judged
// in a queue of that job's own, never the Prolog's nor another job's: a user who floods the FIFO, or asks to be
// answered into a pipe nobody reads, delays only their own job's TaskProlog answers, and a TaskProlog that gets none in
// time runs gdrgate itself. A request for another job is dropped. At most MAX_TASKS_PENDING requests wait, one per
// asking process (the rest are dropped, counted, said once), and an answer is written at once into the asking
// process's pipe, or given up after REPLY_MS.
import net from 'node:net';
import type { Host } from '../host/host.js';
import { log } from '../log.js';
import { pipeOf, replyAll } from './reply.js';
import { answerTask, formatTaskReply, parseTaskRequest, type TaskAnswer } from './task.js';

/** A step's first tasks on one node ask at once (one per view): 8 GPUs' worth, twice. */
export const MAX_TASKS_PENDING = 16;
/** A TaskProlog reads its answer as soon as it comes (bash `read -N`): a pipe still full after this is not read. */
export const REPLY_MS = 250;

/** Reads `job`'s task requests from `fd` (its FIFO, opened read-write) until destroyed. */
export function serveTasks(fd: number, o: { readonly config: string; readonly live: Host; readonly stopping: () => boolean; readonly job: string }): { destroy(): void } {
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
      if (req.value.job !== o.job) {
        dropped++;
        continue;
      }
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
          const sent = await replyAll(asked, formatTaskReply(req.value.nonce, a), REPLY_MS);
          // One line per view judged (a step's first task): whether the agent answered, or why gdrgate judges instead.
          const ms = Math.round((performance.now() - t0) * 10) / 10;
          (await log())[sent ? 'info' : 'warn']({ client: req.value.pid, job: req.value.job, ms, ...(a.ok ? { exitCode: a.code } : { why: a.why }) }, sent ? (a.ok ? 'gdrgate agent: TaskProlog answered' : 'gdrgate agent: TaskProlog left to gdrgate') : 'gdrgate agent: the TaskProlog stopped waiting before the answer');
        })
        .catch(() => undefined)
        .then(async () => {
          asking.delete(who);
          if (--pending > 0 || dropped === 0) return;
          (await log()).warn({ dropped }, `gdrgate agent: dropped ${dropped} TaskProlog request(s): more than ${MAX_TASKS_PENDING} waiting, a process asking again, or a request for another job (a TaskProlog that asked runs gdrgate)`);
          dropped = 0;
        })
        .catch(() => undefined);
    }
  });
  input.on('error', () => undefined);
  return { destroy: () => input.destroy() };
}
