// pino logger to stderr or a file, never stdout (stdout carries the report). Created on first use.
import type { Logger } from 'pino';

let logger: Logger | undefined;
let target: string | undefined;

export function setLogFile(file: string | undefined): void {
  target = file;
  logger = undefined;
}

export async function log(): Promise<Logger> {
  if (!logger) {
    const { pino } = await import('pino');
    // Synchronous writes: a prolog exits right after its last line and must not lose it.
    const dest = pino.destination({ dest: target ?? 2, sync: true, mkdir: true });
    logger = pino({ base: { tool: 'gdrgate', pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, dest);
  }
  return logger;
}
