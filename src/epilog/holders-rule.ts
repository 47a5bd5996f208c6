// Pure: which device nodes the planned probes use, and whether the processes found holding one open (src/epilog/holders.ts
// reads them from /proc) keep this Epilog from probing. A process that left its job (proctrack/linuxproc or pgid, a
// daemon started with setsid or nohup, a task Slurm failed to kill) has no job state directory and may have no job
// cgroup: busy.ts does not see it, and a loopback through its GPU or adapter would measure its traffic as a slow path.
import type { Fact } from '../model/fact.js';
import type { ProbeSpec } from '../probes/types.js';

/** A link's text → what it is a device node of (for the reason), or null: not one the probes use. */
export type DeviceMatch = (link: string) => string | null;

/**
 * The nodes the plan's probes open: each GPU's /dev/nvidiaN (N its minor, /proc/driver/nvidia/gpus/<BDF>/information)
 * and each adapter's /dev/infiniband/uverbsN (/sys/class/infiniband_verbs/uverbsN/ibdev). Where that map could not be
 * read, or lacks a planned device, every node of that kind is taken as possibly that device's.
 * /dev/nvidiactl (minor 255), /dev/nvidia-uvm, /dev/nvidia-uvm-tools, /dev/nvidia-modeset and /dev/nvidia-caps/* say
 * nothing about the probed GPU: every CUDA process opens nvidiactl and nvidia-uvm whatever GPU it uses (and
 * nvidia-smi, NVML and the daemons below open nvidiactl too), so counting them would make a job on another GPU, or a
 * monitoring poll, block the probe of this one. A process that uses a GPU holds that GPU's own /dev/nvidiaN (the
 * driver attaches a client to a GPU through its minor: open-gpu-kernel-modules kernel-open/nvidia/nv.c nvidia_open).
 * /dev/infiniband/rdma_cm and umadN are not an adapter's data path (verbs traffic needs the uverbs context). Matched by
 * the path the process opened: container runtimes (nvidia-container-cli, Slurm's own device binding) bind the host's
 * node at the same path, and the kernel shows a link relative to the process's own root; " (deleted)" is an unlinked
 * node still open.
 */
export function probedDevices(units: readonly (readonly ProbeSpec[])[], minors: Fact<ReadonlyMap<number, string>>, verbsOf: Fact<ReadonlyMap<string, string>>): DeviceMatch {
  const gpus = new Set<string>();
  const nics = new Set<string>();
  for (const s of units.flat()) {
    if (s.kind === 'nvbandwidth') for (const g of s.gpus) gpus.add(g);
    else {
      nics.add(s.nic);
      if (s.gpu !== null) gpus.add(s.gpu);
    }
  }
  const exact = new Map<string, string>();
  const minorOf = new Map(minors.state === 'present' ? [...minors.value].map(([m, b]) => [b, m] as const) : []);
  let anyGpu = false;
  for (const g of gpus) {
    const m = minorOf.get(g);
    if (m === undefined) anyGpu = true;
    else exact.set(`/dev/nvidia${m}`, `GPU ${g}`);
  }
  let anyVerbs = false;
  for (const n of nics) {
    const u = verbsOf.state === 'present' ? verbsOf.value.get(n) : undefined;
    if (u === undefined) anyVerbs = true;
    else exact.set(`/dev/infiniband/${u}`, n);
  }
  return (link) => {
    const p = link.endsWith(' (deleted)') ? link.slice(0, -' (deleted)'.length) : link;
    const known = exact.get(p);
    if (known !== undefined) return known;
    if (anyGpu && /^\/dev\/nvidia\d+$/.test(p)) return 'a GPU: which GPU each /dev/nvidiaN is could not be told';
    if (anyVerbs && /^\/dev\/infiniband\/uverbs\d+$/.test(p)) return 'an RDMA adapter: which adapter each uverbsN is could not be told';
    return null;
  };
}

/** What decides whether a process counts, all of it read from /proc/<pid>/status and cgroup, before any fd. */
export interface Who {
  readonly pid: number;
  /** The real uid (/proc/<pid>/status Uid:, as root's namespace maps it); null: not read, `unread` says why. */
  readonly uid: number | null;
  /** Parent, grandparent, … (PPid: chain, as far as read). */
  readonly ancestors: readonly number[];
  /** The systemd cgroup path (/proc/<pid>/cgroup: the v2 line, else v1's name=systemd); null: none or not read. */
  readonly cgroup: string | null;
  readonly unread: string | null;
}

/** A process found holding a probed device open, with what decides whether it counts. */
export interface Holder extends Who {
  /** /proc/<pid>/comm; null when it could not be read. */
  readonly comm: string | null;
  /** The fd link's text and what it is (DeviceMatch). */
  readonly link: string;
  readonly device: string;
}

/** What /proc showed: every process looked at, or why the look could not be finished (could not tell). */
export type HolderScan =
  | { readonly done: true; readonly holders: readonly Holder[]; readonly processes: number; readonly fds: number }
  | { readonly done: false; readonly why: string };

/** `held`: a process counts (`why` says which, with what); `unknown`: could not tell (`why` says why). */
export type HolderVerdict = { readonly probe: true } | { readonly probe: false; readonly kind: 'held' | 'unknown'; readonly why: string };

/** The Epilog's reason for not probing; a dry run (which probes anyway) says that an Epilog would not. */
export function heldReason(v: Extract<HolderVerdict, { probe: false }>, dryRun: boolean): string {
  if (dryRun) return `${v.why}: an Epilog would not probe`;
  return v.kind === 'held' ? `${v.why}: not probed, its traffic would read as a slow path` : `${v.why}: not probed`;
}

/** shadow-utils' default UID_MIN (useradd and login.defs(5)), where /etc/login.defs does not set one. */
export const DEFAULT_UID_MIN = 1000;

/** UID_MIN of /etc/login.defs ("UID_MIN  1000"); null: no such line, or not a decimal number. */
export function parseUidMin(text: string): number | null {
  const m = /^[ \t]*UID_MIN[ \t]+(\d{1,10})[ \t]*$/m.exec(text);
  return m ? Number(m[1]) : null;
}

/** A unit the system manager runs (system.slice/<name>.service) other than slurmd's, where proctrack/linuxproc leaves jobs. */
const SYSTEM_SERVICE = /^\/system\.slice\/(?!slurmd\.service(?:\/|$))[^/]+\.service(?:\/|$)/;

/**
 * Which processes count: not this Epilog nor a process it started (`self` among its ancestors), run by a user (real uid
 * at least UID_MIN), and not a system service's. The node's own GPU daemons hold every /dev/nvidiaN open all the time
 * and must never count, or a DGX/HGX node would never be probed again: nvidia-persistenced attaches every GPU while
 * persistence mode is on and runs as root or, with --user, as the system account its init/install.sh makes
 * (`useradd -r nvidia-persistenced`), under nvidia-persistenced.service; nv-hostengine (DCGM) runs as root, or as
 * the account its --service-account names, under nvidia-dcgm.service (DCGM's nv-hostengine reference); nv-fabricmanager
 * and dcgm-exporter run as root. System accounts are below UID_MIN (login.defs(5): SYS_UID_MAX below it). A service's
 * unit runs under system.slice/<name>.service, whatever its account's uid (a --service-account above UID_MIN,
 * DynamicUser='s 61184-65519 of systemd.exec(5)). A job's process is its user's (Slurm
 * starts tasks with the job's uid; a rootless container's root is its user's uid as root's /proc shows it), in
 * slurmstepd.scope or slurm/uid_<uid>/job_<id>, slurmd.service (proctrack/linuxproc), a user's session, or wherever it
 * escaped to. A process whose user could not be read could be one. The scan (holders.ts) asks this of every process
 * before reading its fds, so that the fds of root's and the services' processes, most of a node's, are never read: on
 * a node where root's ptrace access to some of them is confined (an LSM profile, Yama), readlink(2) of their fds
 * answers EACCES, and a look that read them could never finish. Only a cgroup path can take a process out (never put
 * one in): with the path still unread (null), `counts` is true of every process it could be true of.
 */
export function counts(w: Who, o: CountOptions): boolean {
  const mine = w.pid === o.self || w.ancestors.includes(o.self);
  return !mine && !(w.cgroup !== null && SYSTEM_SERVICE.test(w.cgroup)) && (w.uid === null || w.uid >= o.uidMin);
}

/** `counts`'s context: this Epilog's pid, as the /proc read numbers it, and UID_MIN. */
export interface CountOptions {
  readonly self: number;
  readonly uidMin: number;
}

/** A process as a reason names it: "pid 31337 (python3, uid 1000)". */
export const whoText = (w: Who, comm: string | null): string => `pid ${w.pid} (${comm ?? 'comm unread'}, ${w.uid === null ? `user unread: ${w.unread ?? 'unknown'}` : `uid ${w.uid}`})`;

/** Whether to probe: no holder counts (`counts`), and the look was finished. */
export function holdersVerdict(scan: HolderScan, o: CountOptions): HolderVerdict {
  if (!scan.done) return { probe: false, kind: 'unknown', why: `which processes hold the probed devices open could not be told (${scan.why})` };
  const counted = scan.holders.filter((h) => counts(h, o));
  if (!counted.length) return { probe: true };
  const one = (h: Holder): string => `${whoText(h, h.comm)} holds ${h.link} (${h.device})`;
  const more = counted.length > 4 ? `; +${counted.length - 4} more` : '';
  return { probe: false, kind: 'held', why: `${counted.slice(0, 4).map(one).join('; ')}${more}` };
}
