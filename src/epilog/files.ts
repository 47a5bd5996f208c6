// The epilog's own small files in the spool directory: the sampling stamp and the one-prober lock, through the
// gate's one way to write and lock files (src/host/files.ts, src/host/lock.ts). Real paths, not kernel paths.
import { join } from 'node:path';
import { ensureSafeDir, readSmall, writeAtomic } from '../host/files.js';
import { takeLock } from '../host/lock.js';
import { parseStamp, type Stamp } from './policy.js';

/** The textfile is written the one way too; `gdrgate samples --prom` imports it from here. */
export { writeAtomic } from '../host/files.js';

export const STAMP = 'probe-stamp.json';
/** When the judged window starts (a drain of ours for bandwidth: the samples before it were of the path as it was). */
export const WINDOW_FROM = 'probe-window.json';
export const PROBE_LOCK = 'probe.lock';
const MAX_STAMP_BYTES = 4096;
/** The largest time a Date holds (ECMA-262 TimeClip: 8.64e15 ms). */
const MAX_DATE_MS = 8.64e15;

/** The spool directory, created if needed; refused when another user could write into it (they could plant links there). */
export function ensureDir(dir: string): void {
  ensureSafeDir(dir, 0o755);
}

/** The last probing run's stamp; null when absent, planted (link, FIFO), oversized or malformed. */
export function readStamp(dir: string): Stamp | null {
  const r = readSmall(join(dir, STAMP), { max: MAX_STAMP_BYTES });
  return r.ok ? parseStamp(r.value.toString('utf8')) : null;
}

export function writeStamp(dir: string, s: Stamp): void {
  writeAtomic(join(dir, STAMP), `${JSON.stringify(s)}\n`);
}

/**
 * One probing epilog per node at a time (two loopbacks on one HCA and port would measure each other). A lock whose pid
 * is gone, or older than staleMs, is broken once. Returns the release function, or why the lock is held.
 */
export function takeProbeLock(dir: string, staleMs: number): { release: () => void } | { held: string } {
  const l = takeLock(join(dir, PROBE_LOCK), { staleMs, holder: (pid) => `another epilog${pid} is probing` });
  return l.ok ? l : { held: l.why };
}

/** The start of the judged window (Unix ms), written when the Epilog drains for bandwidth; null when none or malformed. */
export function readWindowFrom(dir: string): number | null {
  const r = readSmall(join(dir, WINDOW_FROM), { max: MAX_STAMP_BYTES });
  if (!r.ok) return null;
  try {
    const v = (JSON.parse(r.value.toString('utf8')) as { from?: unknown }).from;
    // A time a clock can hold (whole ms since 1970, within Date's range): ±1e17 is a torn or hand-made file, and a
    // Date of it throws where the window is said (the textfile, the rewrite of a start ahead of the clock).
    return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_DATE_MS ? v : null;
  } catch {
    return null;
  }
}

export function writeWindowFrom(dir: string, from: number, why: string): void {
  writeAtomic(join(dir, WINDOW_FROM), `${JSON.stringify({ from, why })}\n`);
}
