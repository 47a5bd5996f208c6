// Which processes hold a probed device node open, from /proc (fs/proc/fd.c: /proc/<pid>/fd/<n> links read as the path
// the file was opened by, "/dev/nvidia3", or "socket:[123]", "pipe:[7]", "anon_inode:[eventfd]"); the rule that
// decides whether they keep the Epilog from probing is holders-rule.ts. Root's /proc shows every process of every
// container and PID namespace below its own, numbered as root sees them. Bounded: a node may run tens of thousands of
// processes with as many fds each, nearly all of them root's or a service's, which never count: only the fds of a
// process that could count are read (its status and cgroup first). Past a count or the time limit the look is
// unfinished, "could not tell".
import { SCAN_LIMITS, type ScanLimits } from './holders-limits.js';
import { someNamesOn } from '../host/dirs.js';
import type { Host, ReadResult } from '../host/host.js';
import { readMinors, readVerbsOf } from '../inventory/placement.js';
import { statusField, statusWords } from '../parsers/proc-status.js';
import type { ProbeSpec } from '../probes/types.js';
import { type CountOptions, counts, DEFAULT_UID_MIN, type DeviceMatch, type Holder, type HolderScan, holdersVerdict, type HolderVerdict, parseUidMin, probedDevices, type Who, whoText } from './holders-rule.js';

/** PPid hops walked to tell a process this Epilog started (its children's children). */
const MAX_HOPS = 32;

/** /proc's entries that are not processes (self, sys, meminfo, …): a few dozen; asked for besides the processes. */
const PROC_OTHERS = 1024;

export interface ScanOptions {
  readonly limits?: ScanLimits;
  /** The clock the time limit is read on (tests give one that runs). */
  readonly now?: () => number;
}

/**
 * Whether a process that counts (holders-rule.ts) holds a device node of the planned probes open; `self`: this
 * Epilog's pid, as the /proc it reads numbers it (slurmd's namespace, where the Epilog runs).
 */
export async function devicesHeld(host: Host, units: readonly (readonly ProbeSpec[])[], self: number, o: ScanOptions = {}): Promise<HolderVerdict> {
  const [minors, verbsOf, defs] = await Promise.all([readMinors(host), readVerbsOf(host), host.readText('/etc/login.defs')]);
  const uidMin = (defs.ok ? parseUidMin(defs.value) : null) ?? DEFAULT_UID_MIN;
  const who = { self, uidMin };
  return holdersVerdict(await scanHolders(host, probedDevices(units, minors, verbsOf), who, o), who);
}

/** A process's status as the scan read it: its uid (or why not) and parent; null when the process has ended. */
interface Status {
  readonly uid: number | null;
  readonly unread: string | null;
  readonly ppid: number | null;
}

/**
 * The processes of `host`'s /proc that could count (holders-rule.ts `counts`, asked of `who`) and hold a node `match`
 * knows open, one entry per process and node. Each process's status (uid, parent) and, where that leaves it a
 * candidate, its cgroup are read first; the fds only of those that could count.
 */
export async function scanHolders(host: Host, match: DeviceMatch, who: CountOptions, o: ScanOptions = {}): Promise<HolderScan> {
  const lim = o.limits ?? SCAN_LIMITS;
  const now = o.now ?? Date.now;
  const until = now() + lim.ms;
  const ls = await someNamesOn(host, '/proc', lim.processes + PROC_OTHERS + 1);
  if (!ls.ok) return { done: false, why: `/proc: ${ls.reason}` };
  // In pid order (readdir's is the file system's), as each process's fds: the same /proc reads the same.
  const pids = ls.value.filter((n) => /^[1-9]\d*$/.test(n)).map(Number).sort((a, b) => a - b);
  if (pids.length > lim.processes || ls.value.length > lim.processes + PROC_OTHERS) return { done: false, why: `more than ${lim.processes} processes` };
  const late = (what: string): HolderScan => ({ done: false, why: `not finished in ${lim.ms} ms (${what})` });
  const statuses = new Map<number, Status | null>();
  for (const p of pids) {
    if (now() > until) return late(`${statuses.size} of ${pids.length} processes' status read`);
    statuses.set(p, readStatus(await host.readText(`/proc/${p}/status`), `/proc/${p}/status`));
  }
  const found: { pid: number; link: string; device: string; who: Who }[] = [];
  let fds = 0;
  let looked = 0;
  for (const p of pids) {
    if (now() > until) return late(`${fds} fds of ${looked} processes read`);
    const st = statuses.get(p);
    if (!st) continue; // ended meanwhile: it holds nothing now
    const w: Who = { pid: p, uid: st.uid, unread: st.unread, ancestors: ancestorsOf(st, statuses), cgroup: null };
    if (!counts(w, who)) continue;
    const cg = await host.readText(`/proc/${p}/cgroup`);
    const it: Who = { ...w, cgroup: cg.ok ? systemdPath(cg.value) : null };
    if (!counts(it, who)) continue;
    looked++;
    const dir = `/proc/${p}/fd`;
    const names = await someNamesOn(host, dir, lim.fds - fds + 1);
    // Gone meanwhile: it holds nothing now. Any other failure (EACCES: hidepid, a confined ptrace): it could hold one.
    if (!names.ok && names.missing) continue;
    if (!names.ok) return { done: false, why: await unreadable(host, it, `${dir}: ${names.reason}`) };
    if (fds + names.value.length > lim.fds) return { done: false, why: `more than ${lim.fds} open files` };
    fds += names.value.length;
    const seen = new Set<string>();
    for (const [k, n] of names.value.sort((a, b) => Number(a) - Number(b)).entries()) {
      if ((k & 255) === 255 && now() > until) return late(`in ${dir}`);
      const l = await host.readLink(`${dir}/${n}`);
      if (!l.ok && l.missing) continue; // closed meanwhile
      if (!l.ok) return { done: false, why: await unreadable(host, it, `${dir}/${n}: ${l.reason}`) };
      const device = match(l.value);
      if (device !== null && !seen.has(l.value)) {
        seen.add(l.value);
        found.push({ pid: p, link: l.value, device, who: it });
      }
    }
  }
  const holders: Holder[] = [];
  for (const f of found) {
    const comm = await commOf(host, f.pid);
    holders.push({ ...f.who, comm, link: f.link, device: f.device });
  }
  return { done: true, holders, processes: pids.length, fds };
}

/** Why the look could not be finished at a process that could count: who it is, and what could not be read. */
async function unreadable(host: Host, w: Who, what: string): Promise<string> {
  return `${whoText(w, await commOf(host, w.pid))} could hold one: ${what}`;
}

async function commOf(host: Host, pid: number): Promise<string | null> {
  const comm = await host.readText(`/proc/${pid}/comm`);
  return comm.ok ? comm.value.replace(/\n$/, '') : null;
}

function readStatus(status: ReadResult<string>, at: string): Status | null {
  if (!status.ok && status.missing) return null;
  const uidWord = status.ok ? statusWords(status.value, 'Uid')[0] : undefined;
  const uid = uidWord !== undefined && /^\d{1,10}$/.test(uidWord) ? Number(uidWord) : null;
  const unread = uid !== null ? null : status.ok ? `${at}: no Uid line` : `${at}: ${status.reason}`;
  return { uid, unread, ppid: status.ok ? parentOf(status.value) : null };
}

/** The PPid chain as the statuses read show it, up to a process not read (ended, or started since the listing). */
function ancestorsOf(st: Status, statuses: ReadonlyMap<number, Status | null>): number[] {
  const ancestors: number[] = [];
  let ppid = st.ppid;
  for (let hop = 0; ppid !== null && ppid > 0 && hop < MAX_HOPS && !ancestors.includes(ppid); hop++) {
    ancestors.push(ppid);
    ppid = statuses.get(ppid)?.ppid ?? null;
  }
  return ancestors;
}

function parentOf(status: string): number | null {
  const v = statusField(status, 'PPid');
  return v !== null && /^\d{1,10}$/.test(v) ? Number(v) : null;
}

/**
 * The process's place in systemd's tree (kernel/cgroup/cgroup.c proc_cgroup_show: "hierarchy:controllers:path"): the
 * cgroup v2 line ("0::/system.slice/x.service"), else cgroup v1's named systemd hierarchy ("1:name=systemd:/…").
 */
export function systemdPath(text: string): string | null {
  const lines = text.split('\n');
  const v2 = lines.find((l) => l.startsWith('0::'));
  if (v2 !== undefined) return v2.slice(3);
  const v1 = lines.find((l) => /^\d+:name=systemd:/.test(l));
  return v1 === undefined ? null : v1.slice(v1.indexOf(':name=systemd:') + ':name=systemd:'.length);
}
