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

/** O_PATH (asm-generic/fcntl.h, x86-64 and arm64 alike; node:fs has no constant): a reference, no open of the file. */
const O_PATH = 0o10000000;

/**
 * That same pipe opened for writing, or null: it is no longer there (the wrapper timed out and went on), or another
 * is there since. The asker's descriptor is first taken as an O_PATH reference, which opens nothing (no file
 * system is asked, no open is seen by a watcher); what that reference holds can no longer change, and its name is the
 * kernel's ("pipe:[inode]"). Only when it is that pipe is it opened, through the reference: a descriptor the asker
 * swapped to another file between a look and an open makes root open nothing. Non-blocking: the wrapper holds its
 * pipe open for reading and writing, so the open never waits.
 */
function openPipe(a: Asked<Where>): number | null {
  let ref: number;
  try {
    if (!waiting(a)) return null;
    ref = fs.openSync(replyPath(a.req.pid, a.req.fd), O_PATH);
  } catch {
    return null;
  }
  let fd: number | null = null;
  try {
    if (fs.readlinkSync(`/proc/self/fd/${ref}`) !== `pipe:[${a.pipe}]`) return null;
    fd = fs.openSync(`/proc/self/fd/${ref}`, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    const st = fs.fstatSync(fd);
    if (st.isFIFO() && st.ino === a.pipe) return fd;
  } catch {
    /* closed below */
  } finally {
    fs.closeSync(ref);
  }
  if (fd !== null) fs.closeSync(fd);
  return null;
}

/** Writes one reply into the Prolog's pipe (a write under PIPE_BUF into an empty pipe is whole); false when it did not go. */
export function reply(a: Asked, line: string): boolean {
  const fd = openPipe(a);
  if (fd === null) return false;
  try {
    return fs.writeSync(fd, line) === Buffer.byteLength(line);
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
  const fd = openPipe(a);
  if (fd === null) return false;
  try {
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
  } finally {
    fs.closeSync(fd);
  }
}
