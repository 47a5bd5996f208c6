// RLIMIT_MEMLOCK of the gate's process and of slurmd (Prolog/Epilog inherit slurmd's limits: DESIGN §5). The gate's
// process is /proc/self, or, when the agent answers a Prolog, the Prolog's own /proc/<pid> (gdrgate agent).
import type { Host } from '../host/host.js';
import type { ProcessMemlock } from '../model/inventory.js';
import { parseMemlock } from '../parsers/limits.js';
import { factText, Notes } from './read.js';
import { present, unknown, valueOf } from '../model/fact.js';

async function limitOf(host: Host, who: string, pid: ProcessMemlock['pid'], path: string, notes: Notes): Promise<ProcessMemlock> {
  const r = await host.readText(path);
  if (!r.ok) return { who, pid, limit: unknown(r.reason) };
  const p = parseMemlock(r.value);
  if (!p.ok) notes.add(path, p.error);
  return { who, pid, limit: p.ok ? present(p.value) : unknown(p.error) };
}

function ppidOf(status: string | undefined): number | null {
  const m = status ? /^PPid:\s+(\d+)/m.exec(status) : null;
  return m ? Number(m[1]) : null;
}

/** Walks up from this process (the prolog is a descendant of slurmd) and falls back to slurmd's pid files. */
async function findSlurmd(host: Host, notes: Notes, pidFiles: readonly string[], selfProc: string): Promise<number | null> {
  let pid = ppidOf(valueOf(await factText(host, `${selfProc}/status`, notes)));
  for (let hops = 0; pid !== null && pid > 1 && hops < 8; hops++) {
    const comm = valueOf(await factText(host, `/proc/${pid}/comm`, notes));
    if (comm === 'slurmd') return pid;
    pid = ppidOf(valueOf(await factText(host, `/proc/${pid}/status`, notes)));
  }
  for (const f of pidFiles) {
    const t = valueOf(await factText(host, f, notes));
    if (t && /^\d+$/.test(t) && valueOf(await factText(host, `/proc/${t}/comm`, notes)) === 'slurmd') return Number(t);
  }
  return null;
}

/** `pid`: the process the gate judges for (the agent's client, a Prolog); null: this process, /proc/self. */
export async function readMemlock(host: Host, notes: Notes, pidFiles: readonly string[], pid: number | null = null): Promise<ProcessMemlock[]> {
  const selfProc = pid === null ? '/proc/self' : `/proc/${pid}`;
  const self = limitOf(host, 'self', pid ?? 'self', `${selfProc}/limits`, notes);
  const slurmd = await findSlurmd(host, notes, pidFiles, selfProc);
  const out = [await self];
  if (slurmd !== null) out.push(await limitOf(host, 'slurmd', slurmd, `/proc/${slurmd}/limits`, notes));
  return out;
}
