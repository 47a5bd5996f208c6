// RLIMIT_MEMLOCK of the gate's process and of slurmd (Prolog/Epilog inherit slurmd's limits: DESIGN §5). The gate's
// process is /proc/self, or, when the agent answers a Prolog, the Prolog's own /proc/<pid> (gdrgate agent).
import type { Host } from '../host/host.js';
import type { ProcessMemlock } from '../model/inventory.js';
import { parseMemlock } from '../parsers/limits.js';
import type { Notes } from './read.js';
import { present, unknown } from '../model/fact.js';
import type { SlurmdFound } from './slurmd.js';

async function limitOf(host: Host, who: string, pid: ProcessMemlock['pid'], path: string, notes: Notes): Promise<ProcessMemlock> {
  const r = await host.readText(path);
  if (!r.ok) return { who, pid, limit: unknown(r.reason) };
  const p = parseMemlock(r.value);
  if (!p.ok) notes.add(path, p.error);
  return { who, pid, limit: p.ok ? present(p.value) : unknown(p.error) };
}

/** `pid`: the process the gate judges for (the agent's client, a Prolog); null: this process, /proc/self. */
export async function readMemlock(host: Host, notes: Notes, found: Promise<SlurmdFound>, pid: number | null = null): Promise<ProcessMemlock[]> {
  const selfProc = pid === null ? '/proc/self' : `/proc/${pid}`;
  const self = limitOf(host, 'self', pid ?? 'self', `${selfProc}/limits`, notes);
  const slurmd = await found;
  const out = [await self];
  if (typeof slurmd === 'number') out.push(await limitOf(host, 'slurmd', slurmd, `/proc/${slurmd}/limits`, notes));
  else if (slurmd !== null) out.push({ who: 'slurmd', pid: 'unfound', limit: unknown(`slurmd's process could not be looked for: ${slurmd.why}`) });
  return out;
}
