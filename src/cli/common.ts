// The report, to stdout, whole.
import { writeSync } from 'node:fs';

let viaStream = false;

/**
 * The report, to stdout. Written straight to fd 1: process.stdout would build a stream (and load its modules)
 * in every prolog. A non-blocking pipe that is full (EAGAIN) hands the rest, and every later write, to
 * process.stdout, which waits for the reader.
 */
export function out(text: string): void {
  const buf = Buffer.from(text.endsWith('\n') ? text : text + '\n', 'utf8');
  let done = 0;
  while (!viaStream && done < buf.length) {
    try {
      done += writeSync(1, buf, done, buf.length - done);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      viaStream = true;
    }
  }
  if (done < buf.length) process.stdout.write(buf.subarray(done));
}
