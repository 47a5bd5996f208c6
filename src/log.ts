// pino logger to stderr or a file, never stdout (stdout carries the report). Created on first use.
// A log that cannot be written (read-only disk, ENOSPC) falls back to stderr and never fails the job.
import path from 'node:path';
import type { Logger } from 'pino';
import { closeFd, O_APPEND, O_CREAT, O_WRONLY, writeText } from './host/fd.js';
import { assertSafeDir, openRegular } from './host/files.js';
import { fileWhy } from './host/file-why.js';

let logger: Logger | undefined;
let target: string | undefined;
let dest: Destination | undefined;

/** The next log() writes to `file` (stderr if undefined); the file the logger had open is closed (the agent sets one per request). */
export function setLogFile(file: string | undefined): void {
  dest?.close();
  target = file;
  logger = undefined;
  dest = undefined;
}

interface Destination {
  /** Opens `file` anew (stderr when undefined): a log file rotated since the last open is followed. */
  open(file: string | undefined): void;
  write(msg: string): void;
  close(): void;
}

/** A synchronous destination that swallows its own write errors (a prolog exits right after its last line). */
function destination(): Destination {
  let fd = 2;
  let failed = false;
  return {
    open(file: string | undefined): void {
      failed = false;
      if (!file) return;
      try {
        // A link, FIFO or directory at logFile must neither redirect nor block the prolog in open(2) before every
        // deadline could fire: the one way the gate opens its files (O_NOFOLLOW|O_NONBLOCK, a regular file or device),
        // in a directory only root (or this user) can write, into a file of root's (or this user's) own. Its directory
        // alone, as the Prometheus textfile's: Ubuntu's /var/log is group syslog's (0775), and a redirect by that group
        // could only put root's lines into a gdrgate.log elsewhere.
        assertSafeDir(path.dirname(file), false);
        fd = openRegular(file, O_WRONLY | O_APPEND | O_CREAT, 0o640, process.geteuid?.() ?? 0, true);
      } catch (e) {
        writeText(2, `gdrgate: cannot open log file: ${fileWhy(file, e)}; logging to stderr\n`);
      }
    },
    write(msg: string): void {
      try {
        writeText(fd, msg);
      } catch (e) {
        if (fd !== 2 && !failed) {
          failed = true;
          try {
            writeText(2, `gdrgate: log write failed (${(e as Error).message}); logging to stderr\n`);
          } catch {
            /* stderr closed too: nothing left to tell */
          }
        }
        fd = 2;
        try {
          writeText(2, msg);
        } catch {
          /* nowhere to log; the job must not fail for it */
        }
      }
    },
    close(): void {
      if (fd === 2) return;
      try {
        closeFd(fd);
      } catch {
        /* already gone */
      }
      fd = 2;
    },
  };
}

/**
 * One logger per target, kept: the agent sets the config's log file for each Prolog and stderr after it, and making
 * a pino logger each time cost more than the line it wrote. Its file is still opened anew each time (setLogFile).
 * Kept for one process only: a startup snapshot carries the heap of the process that made it, whose warm-up runs
 * logged, and every line of a Prolog started from that blob would carry the builder's pid.
 */
const made = new Map<string, { readonly logger: Logger; readonly dest: Destination; readonly pid: number }>();

export async function log(): Promise<Logger> {
  if (!logger) {
    let m = made.get(target ?? '');
    if (!m || m.pid !== process.pid) {
      const pino = (await import('pino')).default;
      const d = destination();
      m = { dest: d, pid: process.pid, logger: pino({ base: { tool: 'gdrgate', pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, d) };
      if (made.size >= 4) made.clear(); // a process logs to one or two targets; a long list would be a leak
      made.set(target ?? '', m);
    }
    m.dest.open(target);
    dest = m.dest;
    logger = m.logger;
  }
  return logger;
}
