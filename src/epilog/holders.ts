// Which processes hold a probed device node open, from /proc (fs/proc/fd.c: /proc/<pid>/fd/<n> links read as the path
// the file was opened by, "/dev/nvidia3", or "socket:[123]", "pipe:[7]", "anon_inode:[eventfd]"); the rule that
// decides whether they keep the Epilog from probing is holders-rule.ts. Root's /proc shows every process of every
// container and PID namespace below its own, numbered as root sees them. Bounded: a node may run tens of thousands of
// processes with as many fds each; past a count or the time limit the look is unfinished, "could not tell".
import { someNamesUnder } from '../host/dirs.js';
import type { Host } from '../host/host.js';
import { readMinors, readVerbsOf } from '../inventory/placement.js';
import { statusField, statusWords } from '../parsers/proc-status.js';
import type { ProbeSpec } from '../probes/types.js';
import { DEFAULT_UID_MIN, type DeviceMatch, type Holder, type HolderScan, holdersVerdict, type HolderVerdict, parseUidMin, probedDevices } from './holders-rule.js';

export interface ScanLimits {
  /** Processes looked at (/proc's numeric entries). */
  readonly processes: number;
  /** fd links read, over all processes. */
  readonly fds: number;
  /** Wall time of the whole look. */
  readonly ms: number;
}

/** Above a large node's count (pid_max allows millions; a busy 2-socket GPU node runs a few thousand). */
export const SCAN_LIMITS: ScanLimits = { processes: 65_536, fds: 1_000_000, ms: 2_000 };

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
  return holdersVerdict(await scanHolders(host, probedDevices(units, minors, verbsOf), o), { self, uidMin });
}

/** The processes of `host`'s /proc that hold a node `match` knows open, one entry per process and node. */
export async function scanHolders(host: Host, match: DeviceMatch, o: ScanOptions = {}): Promise<HolderScan> {
  const lim = o.limits ?? SCAN_LIMITS;
  const now = o.now ?? Date.now;
  const until = now() + lim.ms;
  const ls = someNamesUnder(host.root, '/proc', lim.processes + PROC_OTHERS + 1);
  if (!ls.ok) return { done: false, why: `/proc: ${ls.reason}` };
  // In pid order (readdir's is the file system's), as each process's fds: the same /proc reads the same.
  const pids = ls.value.filter((n) => /^[1-9]\d*$/.test(n)).sort((a, b) => Number(a) - Number(b));
  if (pids.length > lim.processes || ls.value.length > lim.processes + PROC_OTHERS) return { done: false, why: `more than ${lim.processes} processes` };
  const found: { pid: number; link: string; device: string }[] = [];
  let fds = 0;
  for (const p of pids) {
    if (now() > until) return { done: false, why: `not finished in ${lim.ms} ms (${fds} fds of ${pids.length} processes read)` };
    const dir = `/proc/${p}/fd`;
    const names = someNamesUnder(host.root, dir, lim.fds - fds + 1);
    // Gone meanwhile: it holds nothing now. Any other failure (EACCES: not root, hidepid): it could hold one.
    if (!names.ok && names.missing) continue;
    if (!names.ok) return { done: false, why: `${dir}: ${names.reason}` };
    if (fds + names.value.length > lim.fds) return { done: false, why: `more than ${lim.fds} open files` };
    fds += names.value.length;
    const seen = new Set<string>();
    for (const [k, n] of names.value.sort((a, b) => Number(a) - Number(b)).entries()) {
      if ((k & 255) === 255 && now() > until) return { done: false, why: `not finished in ${lim.ms} ms (in ${dir})` };
      const l = await host.readLink(`${dir}/${n}`);
      if (!l.ok && l.missing) continue; // closed meanwhile
      if (!l.ok) return { done: false, why: `${dir}/${n}: ${l.reason}` };
      const device = match(l.value);
      if (device !== null && !seen.has(l.value)) {
        seen.add(l.value);
        found.push({ pid: Number(p), link: l.value, device });
      }
    }
  }
  const holders: Holder[] = [];
  for (const f of found) {
    const h = await describe(host, f);
    if (h !== null) holders.push(h);
  }
  return { done: true, holders, processes: pids.length, fds };
}

/** Who a holder is; null when it ended meanwhile (its status gone). */
async function describe(host: Host, f: { pid: number; link: string; device: string }): Promise<Holder | null> {
  const at = `/proc/${f.pid}`;
  const [status, comm, cgroup] = await Promise.all([host.readText(`${at}/status`), host.readText(`${at}/comm`), host.readText(`${at}/cgroup`)]);
  if (!status.ok && status.missing) return null;
  const uidWord = status.ok ? statusWords(status.value, 'Uid')[0] : undefined;
  const uid = uidWord !== undefined && /^\d{1,10}$/.test(uidWord) ? Number(uidWord) : null;
  const unread = uid !== null ? null : status.ok ? `${at}/status: no Uid line` : `${at}/status: ${status.reason}`;
  const ancestors: number[] = [];
  let ppid = status.ok ? parentOf(status.value) : null;
  for (let hop = 0; ppid !== null && ppid > 0 && hop < MAX_HOPS && !ancestors.includes(ppid); hop++) {
    ancestors.push(ppid);
    const s = await host.readText(`/proc/${ppid}/status`);
    ppid = s.ok ? parentOf(s.value) : null;
  }
  return { ...f, comm: comm.ok ? comm.value.replace(/\n$/, '') : null, uid, ancestors, cgroup: cgroup.ok ? systemdPath(cgroup.value) : null, unread };
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
