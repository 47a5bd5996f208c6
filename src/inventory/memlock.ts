// RLIMIT_MEMLOCK of this process and of slurmd (Prolog/Epilog inherit slurmd's limits: DESIGN §5).
import type { Host } from '../host/host.js';
import type { ProcessMemlock } from '../model/inventory.js';
import { parseMemlock } from '../parsers/limits.js';
import { Notes, optText } from './read.js';

async function limitOf(host: Host, who: string, pid: number | null, path: string, notes: Notes): Promise<ProcessMemlock> {
  const r = await host.readText(path);
  if (!r.ok) return { who, pid, limit: { known: false, why: r.reason } };
  const p = parseMemlock(r.value);
  if (!p.ok) notes.add(path, p.error);
  return { who, pid, limit: p.ok ? { known: true, value: p.value } : { known: false, why: p.error } };
}

function ppidOf(status: string | null): number | null {
  const m = status ? /^PPid:\s+(\d+)/m.exec(status) : null;
  return m ? Number(m[1]) : null;
}

/** Walks up from this process (the prolog is a descendant of slurmd) and falls back to slurmd's pid files. */
async function findSlurmd(host: Host, notes: Notes, pidFiles: readonly string[]): Promise<number | null> {
  let pid = ppidOf(await optText(host, '/proc/self/status', notes));
  for (let hops = 0; pid !== null && pid > 1 && hops < 8; hops++) {
    const comm = await optText(host, `/proc/${pid}/comm`, notes);
    if (comm === 'slurmd') return pid;
    pid = ppidOf(await optText(host, `/proc/${pid}/status`, notes));
  }
  for (const f of pidFiles) {
    const t = await optText(host, f, notes);
    if (t && /^\d+$/.test(t) && (await optText(host, `/proc/${t}/comm`, notes)) === 'slurmd') return Number(t);
  }
  return null;
}

export async function readMemlock(host: Host, notes: Notes, pidFiles: readonly string[]): Promise<ProcessMemlock[]> {
  const self = limitOf(host, 'self', null, '/proc/self/limits', notes);
  const slurmd = await findSlurmd(host, notes, pidFiles);
  const out = [await self];
  if (slurmd !== null) out.push(await limitOf(host, 'slurmd', slurmd, `/proc/${slurmd}/limits`, notes));
  return out;
}
