// The one door to a node's files: every /sys, /proc, /dev and /etc read goes through a Host on a root path.
export interface StatInfo {
  readonly kind: 'file' | 'dir' | 'link' | 'char' | 'block' | 'fifo' | 'socket' | 'other';
  readonly mode: number;
  readonly uid: number;
  readonly size: number;
  readonly rdev: number;
}

/** Result of a read that may legitimately fail: absent (ENOENT) is not the same as unreadable (EACCES, EIO). */
export type ReadResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly missing: boolean; readonly reason: string };

/** readText's bound: a text larger than this is not read (a failed read), never handed over cut short. */
export const TEXT_MAX = 16 << 20;

/** One page of the largest size the gate's architectures use (arm64's 64K pages). */
const PAGE_MAX = 64 << 10;
/**
 * Kernel text files the gate reads whole whose size the kernel bounds far below TEXT_MAX. Larger, the file is none the
 * kernel wrote (a capture or snapshot made up, or broken), and parsing it is one synchronous stretch no deadline
 * interrupts: 16 MiB of /proc/modules held a Prolog 2.2 s past a 1 s deadline, a GPU's `resource` 1.3 s.
 */
const KERNEL_TEXT: readonly (readonly [RegExp, number])[] = [
  // fs/sysfs/file.c sysfs_kf_seq_show: a text attribute's show() fills one page (binary ones, config, vpd, are readBytes').
  [/^\/sys\//, PAGE_MAX],
  // One record each: the command line (COMMAND_LINE_SIZE ≤ 4096, bootconfig's 32 KiB), uname, sysctl strings,
  // fs/proc/base.c proc_pid_status (a few CPU and node masks) and comm; the NVIDIA driver's few lines. (A <pid>/limits
  // row the gate does not know is passed over, and memlock still judged: test/hardening/hostile-lines.test.ts.)
  [/^\/proc\/(?:cmdline|version|sys\/kernel\/[\w./]+|(?:self|\d+)\/(?:status|comm)|driver\/nvidia\/(?:version|params|gpus\/[^/]+\/information))$/, PAGE_MAX],
  // kernel/module/procfs.c m_show: a line per loaded module, about 100 bytes: ten thousand modules.
  [/^\/proc\/modules$/, 1 << 20],
];

/** The most readText hands over of `path`: the kernel's bound where KERNEL_TEXT has one, else TEXT_MAX. */
export function textMax(path: string): number {
  for (const [re, max] of KERNEL_TEXT) if (re.test(path)) return max;
  return TEXT_MAX;
}

/** Why a text of `path` larger than textMax(path) is not read. */
export function tooLarge(path: string): string {
  const max = textMax(path);
  return `${path}: larger than ${max >= 1 << 20 ? `${max >> 20} MiB` : `${max >> 10} KiB`}${max < TEXT_MAX ? ' (more than the kernel writes there)' : ''}, not read`;
}

/**
 * A text file the kernel writes (under /sys and /proc) ends with a newline; one that does not was cut short (a torn
 * read or capture, a file over a page), and a prefix of a value is another value: a link width "16" read as "1", a
 * firmware "28.39.1002" as "28.39". Every such file the gate reads ends with one on the real trees of
 * test/fixtures (the H200 captures, hwloc's sysfs trees). `last`: the file's last byte (undefined: empty, not cut).
 */
export function cutShort(path: string, last: number | undefined): string | null {
  return last !== undefined && last !== 0x0a && (path.startsWith('/sys/') || path.startsWith('/proc/')) ? `${path}: cut short (no final newline, which the kernel ends every text file with)` : null;
}

/** readBytes(path, textMax(path) + 1) as readText's answer: decoded whole, or refused as too large or cut short. */
export function wholeText(r: ReadResult<Uint8Array>, path: string): ReadResult<string> {
  if (!r.ok) return r;
  if (r.value.length > textMax(path)) return { ok: false, missing: false, reason: tooLarge(path) };
  const cut = cutShort(path, r.value.length ? r.value[r.value.length - 1] : undefined);
  if (cut) return { ok: false, missing: false, reason: cut };
  return { ok: true, value: Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength).toString('utf8') };
}

/**
 * Whether this process may open a file for reading and writing: 'unknown' when the Host cannot tell (a snapshot
 * holds no permissions of this process; the file vanished). `why` names the errno or the reason.
 */
export type Access = 'rw' | 'denied' | 'unknown';
export interface AccessAnswer {
  readonly access: Access;
  readonly why?: string;
}

export interface Host {
  /** What the paths are read under: a directory, or a snapshot file. '/' on a live node. */
  readonly root: string;
  /** Kernel path (e.g. `/sys/bus/pci/devices`) → entries, sorted. */
  list(path: string): Promise<ReadResult<string[]>>;
  /** The whole file as UTF-8; a failed read when it is larger than TEXT_MAX (never a text cut short). */
  readText(path: string): Promise<ReadResult<string>>;
  readBytes(path: string, max?: number): Promise<ReadResult<Uint8Array>>;
  /**
   * Parts of one file, for files where every byte read costs: a sysfs `config` read is one configuration access
   * per dword, trapped by the hypervisor in a VM (4 KiB of a GPU's config space: 22 ms on the H200 node). `pick`
   * gets a reader of (offset, length) → the bytes there (fewer at the end of the file) and returns what it
   * found. Optional: a Host without it (a capture, a snapshot) has files that are cheapest read whole, and
   * callers do that.
   */
  readParts?<T>(path: string, pick: (at: (offset: number, length: number) => Uint8Array) => T): Promise<ReadResult<T>>;
  /**
   * At most `max` names of a directory, read a batch at a time (opendir, readdir), never the whole listing: /proc and
   * a process's fds may hold millions. Its paths as list() takes them (in a capture, links resolved inside the root,
   * one that leaves it refused). Optional: a Host without it lists whole, and callers cut (host/dirs.ts someNamesOn).
   */
  listSome?(path: string, max: number): Promise<ReadResult<string[]>>;
  /** The link's own text (`../../../bus/pci/drivers/nvidia`). */
  readLink(path: string): Promise<ReadResult<string>>;
  /** Resolve every link, returned as a kernel path (`/sys/devices/pci0000:00/0000:00:06.0`). */
  realPath(path: string): Promise<ReadResult<string>>;
  /** lstat: a link is reported as a link. */
  lstat(path: string): Promise<ReadResult<StatInfo>>;
  stat(path: string): Promise<ReadResult<StatInfo>>;
  /**
   * access(2) with R_OK|W_OK for the real uid, on the path under the root: the file is never opened (opening a
   * GPU or verbs node has side effects). The mode bits and, for a device node, the cgroup's device rule (fs/namei.c
   * inode_permission → devcgroup_inode_permission: cgroup v1's list, v2's BPF program): a node Slurm's
   * ConstrainDevices denies answers EPERM here as at open(2).
   */
  access(path: string): Promise<AccessAnswer>;
  /**
   * Why someone other than root (or this process's user) could change what `path` leads to, or null when nobody can
   * (host/trust.ts: every directory on the way, every link, the file; a path that ends at a missing name, only what
   * leads there: whoever could make the file there could make it absent too). Asked of the files the gate acts on
   * besides the kernel's (Slurm's gres.conf and slurm.conf, slurmd's pid files). Every Host answers, so that a wrapper
   * cannot drop the question: only one over the live node judges; who may change a capture's or a snapshot's copy says
   * nothing of the node's own file, and those answer null.
   */
  untrusted(path: string): string | null;
}

/**
 * `read()` of `path`, refused when someone other than root could change the file, or make it absent (Host.untrusted):
 * a root process that acted on it would act on whatever that person wrote. Refused is unreadable, never absent:
 * "could not tell".
 */
export async function readTrusted<T>(host: Host, path: string, read: () => Promise<ReadResult<T>>): Promise<ReadResult<T>> {
  const r = await read();
  const why = r.ok || r.missing ? host.untrusted(path) : null;
  return why === null ? r : { ok: false, missing: false, reason: `not read: ${why}` };
}

