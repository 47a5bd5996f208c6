// The one writer of stdout. Every byte a command prints goes through here, synchronously, straight to fd 1: the
// command has said all it has to say when it returns, so the process may exit at once (cli.ts does, to leave
// nothing pending after a deadline) without cutting the output short. process.stdout is never used: on a pipe it
// queues what the pipe cannot take yet, and an exit drops the queue (a slow reader got 64 KiB of 350).
import { writeSync } from 'node:fs';
import { escapeText } from '../report/escape.js';

/** Longest wait for a full pipe to take a byte before the output is given up (the command then fails). */
export const STALL_MS = 120_000;
const MAX_NAP_MS = 50;

/** stdout stalled: the reader took nothing for STALL_MS. The command fails rather than claim it delivered. */
export class StdoutStalled extends Error {}

// The pid whose stdout reader went away. A pid, not a flag: the gate's startup snapshot (dist/gate.blob) is a heap
// taken after warm-up runs that printed to the builder's stdout, and a process started from it must not inherit
// the builder's closed pipe. Nothing else is kept between writes for the same reason.
let closedIn = -1;

/** Sleeps the thread (no event loop turn: the write stays synchronous). */
function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Writes all of `data` to fd 1 before it returns. A blocking pipe waits in write(2) itself; a non-blocking one
 * (a parent that set O_NONBLOCK on the shared pipe) answers EAGAIN when full, and is retried after a nap that
 * doubles up to 50 ms, for as long as the reader takes something within `stallMs`. A reader that went away
 * (EPIPE: `gdrgate samples | head -1`) is a normal end for a report read by a person: the rest of the output,
 * and all later output, is dropped quietly. Returns whether all of `data` went out: a command whose output is
 * data that must arrive whole (`snapshot --out -`) fails when it did not.
 */
export function writeStdout(data: string | Uint8Array, stallMs: number = STALL_MS): boolean {
  if (closedIn === process.pid) return false;
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let done = 0;
  let ms = 1;
  let since = performance.now();
  while (done < buf.length) {
    try {
      const n = writeSync(1, buf, done, buf.length - done);
      done += n;
      if (n > 0) {
        ms = 1;
        since = performance.now();
      }
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') {
        closedIn = process.pid;
        return false;
      }
      if (code !== 'EAGAIN') throw e;
      if (performance.now() - since > stallMs) {
        throw new StdoutStalled(`stdout: the reader took nothing for ${stallMs / 1000} s; ${done} of ${buf.length} bytes written`);
      }
      sleep(ms);
      ms = Math.min(ms * 2, MAX_NAP_MS);
    }
  }
  return true;
}

/** The report, to stdout: `text` and one newline, every control but its layout escaped (report/escape.ts). */
export function out(text: string): void {
  const safe = escapeText(text);
  writeStdout(safe.endsWith('\n') ? safe : safe + '\n');
}

/** A long report given in pieces (report/json-pieces.ts), each escaped and written as it comes, then one newline. */
export function outPieces(pieces: Iterable<string>): void {
  let last = '';
  for (const p of pieces) {
    if (!p) continue;
    if (!writeStdout(escapeText(p))) return;
    last = p;
  }
  if (!last.endsWith('\n')) writeStdout('\n');
}
