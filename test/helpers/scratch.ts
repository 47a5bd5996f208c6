// Throwaway directories for tests, removed when the test's process exits (tap runs each test file as a process of
// its own), so that a run of the suite leaves nothing in the temp directory. GDRGATE_KEEP_SCRATCH=1 keeps them, to
// look at after a failure.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Where a generated sysfs tree (data only: nothing there is executed) is written: tmpfs when there is one. Writing an
 * 8-GPU tree's ~1,500 files takes about 1.2 s of CPU on a disk with discard, 0.07 s on tmpfs.
 */
export const TREE_TMP = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

const made: string[] = [];

function remember(dir: string): string {
  if (made.length === 0 && process.env.GDRGATE_KEEP_SCRATCH !== '1') {
    process.once('exit', () => {
      for (const d of made) {
        try {
          rmSync(d, { recursive: true, force: true });
        } catch {
          // A directory a test left mounted or busy stays: the next boot's tmp cleaning has it.
        }
      }
    });
  }
  made.push(dir);
  return dir;
}

/** A new directory `<tmpdir>/<prefix>XXXXXX`, removed at exit. */
export function scratchDir(prefix: string, base: string = tmpdir()): string {
  return remember(mkdtempSync(path.join(base, prefix)));
}

/** scratchDir, without blocking. */
export async function scratchDirAsync(prefix: string, base: string = tmpdir()): Promise<string> {
  return remember(await mkdtemp(path.join(base, prefix)));
}
