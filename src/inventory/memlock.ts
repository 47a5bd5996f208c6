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

/** Whether every uid of `status` (real, effective, saved, filesystem) is root's, or this process's own user's. */
function rootsProcess(status: string | undefined): boolean {
  const m = status ? /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$/m.exec(status) : null;
  const own = process.getuid?.() ?? 0;
  return m !== null && m.slice(1).every((u) => Number(u) === 0 || Number(u) === own);
}

function ppidOf(status: string | undefined): number | null {
  const m = status ? /^PPid:\s+(\d+)/m.exec(status) : null;
  return m ? Number(m[1]) : null;
}

/**
 * Walks up from this process (the prolog is a descendant of slurmd) and falls back to slurmd's pid files. Not found
 * (null) only when every read on the way answered or was absent (a process gone, no pid file): a read that failed
 * (EACCES, EIO) could have been slurmd's, so then `{ why }`, unknown, never "no slurmd" (its limit unjudged).
 */
async function findSlurmd(host: Host, notes: Notes, pidFiles: readonly string[], selfProc: string): Promise<number | null | { why: string }> {
  let why: string | null = null;
  const text = async (path: string, trusted = false): Promise<string | undefined> => {
    const f = await factText(host, path, notes, trusted);
    if (f.state === 'unknown') why ??= f.why;
    return valueOf(f);
  };
  let pid = ppidOf(await text(`${selfProc}/status`));
  // Pid 1 is looked at too (slurmd as its container's init: an entrypoint's `exec slurmd -D`), and ends the walk.
  for (let hops = 0; pid !== null && pid >= 1 && hops < 8; hops++) {
    if ((await text(`/proc/${pid}/comm`)) === 'slurmd') return pid;
    if (pid === 1) break;
    pid = ppidOf(await text(`/proc/${pid}/status`));
  }
  for (const f of pidFiles) {
    // Root's alone: whoever could write it could name a process of theirs called slurmd, whose limit would be judged;
    // and the process root's (anyone may name a process slurmd, and take a stale pid file's number).
    const t = await text(f, true);
    if (t && /^\d+$/.test(t) && (await text(`/proc/${t}/comm`)) === 'slurmd' && rootsProcess(await text(`/proc/${t}/status`))) return Number(t);
  }
  return why === null ? null : { why };
}

/** `pid`: the process the gate judges for (the agent's client, a Prolog); null: this process, /proc/self. */
export async function readMemlock(host: Host, notes: Notes, pidFiles: readonly string[], pid: number | null = null): Promise<ProcessMemlock[]> {
  const selfProc = pid === null ? '/proc/self' : `/proc/${pid}`;
  const self = limitOf(host, 'self', pid ?? 'self', `${selfProc}/limits`, notes);
  const slurmd = await findSlurmd(host, notes, pidFiles, selfProc);
  const out = [await self];
  if (typeof slurmd === 'number') out.push(await limitOf(host, 'slurmd', slurmd, `/proc/${slurmd}/limits`, notes));
  else if (slurmd !== null) out.push({ who: 'slurmd', pid: 'unfound', limit: unknown(`slurmd's process could not be looked for: ${slurmd.why}`) });
  return out;
}
