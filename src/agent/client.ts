// Who may be judged for: the agent answers a request only for a Slurm Prolog, a process of root's that slurmd
// started (slurmd forks and execs the Prolog; from 24.11 through its own binary as a launcher, which execs the
// script in place, so slurmd is still the parent; a chain wrapper or a shell may sit between). With
// PrologFlags=RunInJob (Slurm 24.05+) the job's extern slurmstepd runs the Prolog instead (slurmstepd/mgr.c
// _run_prolog_epilog), and slurmstepd is detached from slurmd: there the Prolog is told from the job's own processes,
// which slurmstepd also starts, by the SLURM_SCRIPT_CONTEXT=prolog_slurmd that prep/script sets for it alone (under
// slurmd another context, epilog_slurmd, is refused too; real 22.05.8 and 24.11.5 show both parents). Only
// root can write into the agent's directory, so this is defence in depth: a root tool that names some other pid, or
// a pid reused after its Prolog died, is not judged (its limits and environment would be another process's), and
// goes back as "fallback".
import type { Host } from '../host/host.js';
import { statusField, statusWords } from '../parsers/proc-status.js';
import { parseEnviron } from './protocol.js';

/** Hops up the parent chain: slurmd → Prolog in practice, with room for a shell or a wrapper between. */
const MAX_HOPS = 8;


/** null when `pid` is root's (real, effective, saved and filesystem uid 0) and a Slurm Prolog; else why not. */
export async function notAProlog(host: Host, pid: number): Promise<string | null> {
  const own = await host.readText(`/proc/${pid}/status`);
  if (!own.ok) return `pid ${pid}: cannot read /proc/${pid}/status: ${own.reason}`;
  const uids = statusWords(own.value, 'Uid');
  if (uids.length !== 4 || uids.some((u) => u !== '0')) return `pid ${pid} is not root's (Uid: ${uids.join(' ') || 'unknown'}): not a Prolog`;
  let parent = Number(statusField(own.value, 'PPid') ?? 0);
  for (let hop = 0; hop < MAX_HOPS && parent > 1; hop++) {
    const comm = await host.readText(`/proc/${parent}/comm`);
    const name = comm.ok ? comm.value.trim() : '';
    if (name === 'slurmd') return slurmdChild(host, pid);
    if (name === 'slurmstepd') return runInJobProlog(host, pid);
    const st = await host.readText(`/proc/${parent}/status`);
    parent = st.ok ? Number(statusField(st.value, 'PPid') ?? 0) : 0;
  }
  return `pid ${pid} has neither slurmd nor slurmstepd among its ancestors: not a Prolog`;
}

/** The pid's SLURM_SCRIPT_CONTEXT (undefined: none), or why its environment cannot be read. */
async function scriptContext(host: Host, pid: number): Promise<{ ctx: string | undefined } | { why: string }> {
  const raw = await host.readBytes(`/proc/${pid}/environ`, 1 << 20);
  if (!raw.ok) return { why: `pid ${pid}: cannot read /proc/${pid}/environ: ${raw.reason}` };
  return { ctx: parseEnviron(Buffer.from(raw.value)).SLURM_SCRIPT_CONTEXT };
}

/**
 * Under slurmd: a Prolog, unless its environment names another script (every release, 22.05-26.05, sets
 * SLURM_SCRIPT_CONTEXT for what slurmd starts through prep/script: epilog_slurmd for an Epilog). None at all is
 * accepted: slurmd sets none for a HealthCheckProgram, which never asks, and the gate itself refuses a prolog
 * request with neither a job id nor the context (cli/gate.ts).
 */
async function slurmdChild(host: Host, pid: number): Promise<string | null> {
  const c = await scriptContext(host, pid);
  if ('why' in c) return c.why;
  if (c.ctx === undefined || c.ctx === 'prolog_slurmd') return null;
  return `pid ${pid} runs under slurmd as SLURM_SCRIPT_CONTEXT=${c.ctx}: not a Prolog`;
}

/** Under slurmstepd: a RunInJob Prolog only when its environment says so. */
async function runInJobProlog(host: Host, pid: number): Promise<string | null> {
  const c = await scriptContext(host, pid);
  if ('why' in c) return c.why;
  if (c.ctx === 'prolog_slurmd') return null;
  return `pid ${pid} runs under slurmstepd without SLURM_SCRIPT_CONTEXT=prolog_slurmd (${c.ctx ?? 'none'}): a job's process, not a Prolog`;
}
