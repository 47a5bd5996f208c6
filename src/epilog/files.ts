// The epilog's own small files in the spool directory: the sampling stamp, the one-prober lock, atomic rewrites
// (stamp, Prometheus textfile). Real paths, not kernel paths: the Host is for node facts.
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseStamp, type Stamp } from './policy.js';
import { errnoCode, pidAlive } from '../host/process.js';

export const STAMP = 'probe-stamp.json';
export const PROBE_LOCK = 'probe.lock';


/** Temp file beside the target, then rename: a reader (node_exporter, the next epilog) sees the old or the new file, never half. */
export function writeAtomic(file: string, text: string, mode = 0o644): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, text, { mode, flag: 'w' });
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

export function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
}

export function readStamp(dir: string): Stamp | null {
  try {
    return parseStamp(readFileSync(join(dir, STAMP), 'utf8'));
  } catch {
    return null;
  }
}

export function writeStamp(dir: string, s: Stamp): void {
  writeAtomic(join(dir, STAMP), `${JSON.stringify(s)}\n`);
}

/**
 * One probing epilog per node at a time (two loopbacks on one HCA and port would measure each other). A lock whose pid
 * is gone, or older than staleMs, is broken once. Returns the release function, or why the lock is held.
 */
export function takeProbeLock(dir: string, staleMs: number): { release: () => void } | { held: string } {
  const file = join(dir, PROBE_LOCK);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o644);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return { release: () => rmSync(file, { force: true }) };
    } catch (e) {
      if (errnoCode(e) !== 'EEXIST') return { held: `cannot create ${file}: ${(e as Error).message}` };
      let pid = NaN;
      let age = 0;
      try {
        pid = Number(readFileSync(file, 'utf8').trim());
        age = Date.now() - statSync(file).mtimeMs;
      } catch {
        continue; // released meanwhile: try again
      }
      if (attempt > 0 || (Number.isSafeInteger(pid) && pid > 0 && pidAlive(pid) && age < staleMs)) return { held: `another epilog (pid ${pid}) is probing` };
      rmSync(file, { force: true });
    }
  }
  return { held: 'probe lock busy' };
}
