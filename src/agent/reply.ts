// Where the agent's answers go: into the pipe the asking wrapper (slurm/prolog.sh, slurm/taskprolog.sh) holds open on a
// descriptor, opened as /proc/<pid>/fd/<fd>, and only while it is the very pipe the wrapper held when the agent took
// its request (a pid reused since, or a wrapper that stopped waiting, gets nothing).
import { closeFd, writeBytes, writeText } from '../host/fd.js';
import { openPipeAt, pipeAt } from '../host/reply-pipe.js';
import { replyPath, type Request } from './protocol.js';

type Where = Pick<Request, 'pid' | 'fd'>;

/** The inode of the pipe the Prolog's reply descriptor holds now; null when it holds none. */
export const pipeOf = (req: Where): number | null => pipeAt(replyPath(req.pid, req.fd));

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

/**
 * That same pipe opened for writing, or null: it is no longer there (the wrapper timed out and went on), or another
 * is there since. Opened through an O_PATH reference to the asker's descriptor, only when that reference holds this
 * very pipe (host/reply-pipe.ts): a descriptor the asker swapped to another file between a look and an open makes
 * root open nothing. Non-blocking: the wrapper holds its pipe open for reading and writing, so the open never waits.
 */
function openPipe(a: Asked<Where>): number | null {
  if (!waiting(a)) return null;
  return openPipeAt(replyPath(a.req.pid, a.req.fd), a.pipe);
}

/** Writes one reply into the Prolog's pipe (a write under PIPE_BUF into an empty pipe is whole); false when it did not go. */
export function reply(a: Asked, line: string): boolean {
  const fd = openPipe(a);
  if (fd === null) return false;
  try {
    return writeText(fd, line) === Buffer.byteLength(line);
  } catch {
    return false;
  } finally {
    closeFd(fd);
  }
}

/**
 * A TaskProlog's answer, which may be longer than PIPE_BUF: written into that same pipe as the TaskProlog reads it,
 * for at most `ms`; false when it did not all go.
 */
export async function replyAll(a: Asked<Where>, text: string, ms = 2000): Promise<boolean> {
  const fd = openPipe(a);
  if (fd === null) return false;
  try {
    const buf = Buffer.from(text);
    const until = performance.now() + ms;
    for (let at = 0; at < buf.length; ) {
      try {
        at += writeBytes(fd, buf, at);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || performance.now() > until) return false;
        await new Promise((r) => setTimeout(r, 2));
      }
    }
    return true;
  } finally {
    closeFd(fd);
  }
}
