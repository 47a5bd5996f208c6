// Who may be judged for: the agent answers a request only for a Slurm Prolog, a process of root's that slurmd
// started (slurmd forks and execs the Prolog; one shell may sit between). Only root can write into the agent's
// directory, so this is defence in depth: a root tool that names some other pid, or a pid reused after its Prolog
// died, is not judged (its limits and environment would be another process's), and goes back as "fallback".
import type { Host } from '../host/host.js';

/** Hops up the parent chain: slurmd → Prolog in practice, with room for a shell or a wrapper between. */
const MAX_HOPS = 8;

function field(status: string, name: string): string | null {
  return new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(status)?.[1] ?? null;
}

/** null when `pid` is root's (real, effective, saved and filesystem uid 0) and slurmd is among its ancestors; else why not. */
export async function notAProlog(host: Host, pid: number): Promise<string | null> {
  const own = await host.readText(`/proc/${pid}/status`);
  if (!own.ok) return `pid ${pid}: cannot read /proc/${pid}/status: ${own.reason}`;
  const uids = field(own.value, 'Uid')?.split(/\s+/) ?? [];
  if (uids.length !== 4 || uids.some((u) => u !== '0')) return `pid ${pid} is not root's (Uid: ${uids.join(' ') || 'unknown'}): not a Prolog`;
  let parent = Number(field(own.value, 'PPid') ?? 0);
  for (let hop = 0; hop < MAX_HOPS && parent > 1; hop++) {
    const comm = await host.readText(`/proc/${parent}/comm`);
    if (comm.ok && comm.value.trim() === 'slurmd') return null;
    const st = await host.readText(`/proc/${parent}/status`);
    parent = st.ok ? Number(field(st.value, 'PPid') ?? 0) : 0;
  }
  return `pid ${pid} has no slurmd among its ancestors: not a Prolog`;
}
