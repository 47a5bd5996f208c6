// Directories: made (with exactly the mode asked, less the umask), listed (whole, or a batch at a time so that a
// directory of millions of entries is never read into memory), removed empty or whole. One syscall (or one
// library call) each, errors as the kernel gives them.
import fs from 'node:fs';
import path from 'node:path';
import type { Host, ReadResult } from './host.js';

export type { Dirent } from 'node:fs';

/** mkdir(2): EEXIST when something is there. */
export const makeDir = (dir: string, mode: number): void => void fs.mkdirSync(dir, { mode });
/**
 * mkdir -p: the missing parents too; what is there already is no error. One mkdir(2) a missing component, from the
 * top: Node's own recursive mkdir retries for ever, in one synchronous loop no timer or signal handler interrupts,
 * where the kernel answers ENOENT for a name whose parent is there (under /proc or /sys: a spool of /proc/x kept a
 * draining Prolog at full CPU past its deadline and SIGTERM, the review of 44e9a6d); here that answer is the error.
 */
export function makeDirs(dir: string, mode: number): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !fs.existsSync(d) && d !== path.dirname(d); d = path.dirname(d)) missing.push(d);
  for (const d of missing.reverse()) {
    try {
      fs.mkdirSync(d, { mode });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}
/** rmdir(2): an empty directory only. */
export const removeDir = (dir: string): void => fs.rmdirSync(dir);
/** rm -rf: links unlinked, never followed; nothing there is no error. */
export const removeTree = (p: string): void => fs.rmSync(p, { recursive: true, force: true });
export const listNames = (dir: string): string[] => fs.readdirSync(dir);
export const listEntries = (dir: string): fs.Dirent[] => fs.readdirSync(dir, { withFileTypes: true });
/** mkdtemp(3): a fresh directory `prefix` + six random characters, mode 0700. */
export const makeTempDir = (prefix: string): string => fs.mkdtempSync(prefix);

/** The first `max` names of `dir` (fewer when it holds fewer): opendir and readdir, never the whole listing. */
export function someNames(dir: string, max: number): string[] {
  const d = fs.opendirSync(dir);
  try {
    const names: string[] = [];
    for (let e = d.readSync(); e !== null && names.length < max; e = d.readSync()) names.push(e.name);
    return names;
  } finally {
    d.closeSync();
  }
}

/**
 * At most `max` names of `kpath` on `host`: its listSome (on a live root or a directory tree: the listing cut at the
 * bound, however many there are, its links followed as the Host follows them), else its whole listing cut (a
 * snapshot file holds no more than it wrote). ENOENT is missing (a process that ended, an fd closed meanwhile), any
 * other error unreadable. A caller that asks one more than it takes tells a listing cut short from one that fits.
 */
export async function someNamesOn(host: Host, kpath: string, max: number): Promise<ReadResult<string[]>> {
  if (host.listSome) return host.listSome(kpath, max);
  const r = await host.list(kpath);
  return r.ok ? { ok: true, value: r.value.slice(0, max) } : r;
}
