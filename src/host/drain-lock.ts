// One drain at a time per node: many prologs failing at once (a job array landing) drain once, one reason.
import fs from 'node:fs';
import path from 'node:path';

export type Lock = { readonly ok: true; release(): void } | { readonly ok: false; readonly why: string };

const STALE_MS = 60_000;

export function takeDrainLock(stateDir: string): Lock {
  const file = path.join(stateDir, 'drain.lock');
  try {
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o711 });
  } catch {
    return { ok: true, release: () => undefined }; // no state dir: draining unlocked beats not draining
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600);
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      return { ok: true, release: () => fs.rmSync(file, { force: true }) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return { ok: true, release: () => undefined };
      const age = Date.now() - (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0);
      if (age < STALE_MS) return { ok: false, why: 'another gdrgate run is draining this node' };
      fs.rmSync(file, { force: true }); // left by a killed run
    }
  }
  return { ok: false, why: 'drain lock busy' };
}
