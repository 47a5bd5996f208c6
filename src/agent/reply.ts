// Where the agent's answers go: into the pipe the asking wrapper (slurm/prolog.sh, slurm/taskprolog.sh) holds open on a
// descriptor, opened as /proc/<pid>/fd/<fd>, and only while it is the very pipe the wrapper held when the agent took
// its request (a pid reused since, or a wrapper that stopped waiting, gets nothing).
import fs from 'node:fs';
import { replyPath, type Request } from './protocol.js';

type Where = Pick<Request, 'pid' | 'fd'>;

/** The inode of the pipe the Prolog's reply descriptor holds now; null when it holds none. */
export function pipeOf(req: Where): number | null {
  try {
    const m = /^pipe:\[(\d+)\]$/.exec(fs.readlinkSync(replyPath(req.pid, req.fd)));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * A request and the pipe its Prolog held when the agent took it. The Prolog still waits while that same pipe is
 * there (it closes it when it stops waiting, slurm/prolog.sh): a pipe of another process that got the pid since, a
 * later Prolog's, is not the one that asked, and never gets this answer.
 */
export interface Asked<R extends Where = Request> {
  readonly req: R;
  readonly pipe: number;
}
export const waiting = (a: Asked<Where>): boolean => pipeOf(a.req) === a.pipe;

/** Writes one reply into the Prolog's pipe; false when the Prolog is no longer reading (it timed out and went on). */
export function reply(a: Asked, line: string): boolean {
  const req = a.req;
  let fd: number;
  try {
    if (!waiting(a)) return false;
    // Non-blocking: the Prolog holds its pipe open for reading and writing, so the open never waits, and a write
    // under PIPE_BUF into an empty pipe is whole.
    fd = fs.openSync(replyPath(req.pid, req.fd), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    // Between the look and the open the Prolog may have gone on: only ever that same pipe is written.
    const st = fs.fstatSync(fd);
    return st.isFIFO() && st.ino === a.pipe && fs.writeSync(fd, line) === Buffer.byteLength(line);
  } catch {
    return false;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A TaskProlog's answer, which may be longer than PIPE_BUF: written into that same pipe as the TaskProlog reads it,
 * for at most `ms`; false when it did not all go.
 */
export async function replyAll(a: Asked<Where>, text: string, ms = 2000): Promise<boolean> {
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
