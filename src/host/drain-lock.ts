// One drain at a time per node: many prologs failing at once (a job array landing) drain once, one reason.
import path from 'node:path';
import { makeDirs } from './dirs.js';
import { assertSafeAbove, assertSafeDir } from './files.js';
import { takeLock } from './lock.js';

export type Lock = { readonly ok: true; release(): void } | { readonly ok: false; readonly why: string };

const STALE_MS = 60_000;

export function takeDrainLock(stateDir: string): Lock {
  try {
    assertSafeAbove(stateDir); // a state directory another user could re-point: no lock made there
    makeDirs(stateDir, 0o711);
    // Nor in one another user can write: a drain.lock of theirs, kept fresh and naming a live pid, would hold off
    // every drain of this node (the Epilog's and the health check's would then drain nothing).
    assertSafeDir(stateDir);
  } catch {
    return { ok: true, release: () => undefined }; // no state dir: draining unlocked beats not draining
  }
  const lock = takeLock(path.join(stateDir, 'drain.lock'), { staleMs: STALE_MS, holder: (pid) => `another gdrgate run${pid} is draining this node` });
  // A lock that cannot even be created (read-only disk): draining unlocked beats not draining.
  return lock.ok || lock.held ? lock : { ok: true, release: () => undefined };
}
