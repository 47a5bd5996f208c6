// pino logger to stderr or a file, never stdout (stdout carries the report). Created on first use.
// A log that cannot be written (read-only disk, ENOSPC) falls back to stderr and never fails the job.
import fs from 'node:fs';
import type { Logger } from 'pino';
import { openRegular } from './host/files.js';

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
  write(msg: string): void;
  close(): void;
}

/** A synchronous destination that swallows its own write errors (a prolog exits right after its last line). */
function destination(file: string | undefined): Destination {
  let fd = 2;
  let failed = false;
  if (file) {
    try {
      // A link, FIFO or directory at logFile must neither redirect nor block the prolog in open(2) before every
      // deadline could fire: the one way the gate opens its files (O_NOFOLLOW|O_NONBLOCK, a regular file or device).
      fd = openRegular(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT, 0o640, undefined, true);
    } catch (e) {
      fs.writeSync(2, `gdrgate: cannot open log file ${file}: ${(e as Error).message}; logging to stderr\n`);
    }
  }
  return {
    write(msg: string): void {
      try {
        fs.writeSync(fd, msg);
      } catch (e) {
        if (fd !== 2 && !failed) {
          failed = true;
          try {
            fs.writeSync(2, `gdrgate: log write failed (${(e as Error).message}); logging to stderr\n`);
          } catch {
            /* stderr closed too: nothing left to tell */
          }
        }
        fd = 2;
        try {
          fs.writeSync(2, msg);
        } catch {
          /* nowhere to log; the job must not fail for it */
        }
      }
    },
    close(): void {
      if (fd === 2) return;
      try {
        fs.closeSync(fd);
      } catch {
        /* already gone */
      }
      fd = 2;
    },
  };
}

export async function log(): Promise<Logger> {
  if (!logger) {
    const pino = (await import('pino')).default;
    dest = destination(target);
    logger = pino({ base: { tool: 'gdrgate', pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, dest);
  }
  return logger;
}
