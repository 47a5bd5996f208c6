// Test-side: the processes fs/proc shows under a generated root: /proc/<pid>/status (the real H200 capture's, its
// Name, Pid, Tgid, PPid, Uid and Gid lines replaced), comm, cgroup (kernel/cgroup/cgroup.c proc_cgroup_show: the
// cgroup v2 line "0::<path>"), and fd/<n> as links whose text is what readlink(2) of the kernel's gives
// (fs/proc/fd.c: "/dev/nvidia3", "socket:[123]", "pipe:[7]", "anon_inode:[eventfd]", "<path> (deleted)").
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { H200 } from '../helpers/paths.js';

export interface GenProcess {
  readonly pid: number;
  readonly ppid: number;
  readonly comm: string;
  readonly uid: number;
  /** The cgroup v2 path ("/system.slice/nvidia-persistenced.service"). */
  readonly cgroup: string;
  /** Each fd's link text, fd 0 first. */
  readonly fds: readonly string[];
  /**
   * What root may not read of it where ptrace access is confined (an LSM profile, Yama): readlink(2) of each fd/<n>
   * answers EACCES (fs/proc/base.c proc_pid_get_link, proc_fd_access_allowed: ptrace_may_access), as this build
   * machine's pid 1 does, or the fd directory cannot be listed. Root passes every mode of a plain file system, so the
   * tree stands an error other than ENOENT in for EACCES, as the scanner takes any such error: 'fd-links' writes each
   * fd/<n> as a regular file (readlink: EINVAL), 'fd-dir' a regular file where fd/ would be (opendir: ENOTDIR).
   */
  readonly unreadable?: 'fd-links' | 'fd-dir';
}

/** The real capture's status with the process's own lines. */
export function processStatus(p: GenProcess): string {
  const set: Record<string, string> = { Name: p.comm, Tgid: String(p.pid), Pid: String(p.pid), PPid: String(p.ppid), Uid: Array(4).fill(p.uid).join('\t'), Gid: Array(4).fill(p.uid).join('\t') };
  return readFileSync(path.join(H200, 'proc/self/status'), 'utf8')
    .split('\n')
    .map((l) => {
      const k = l.slice(0, l.indexOf(':'));
      return k in set ? `${k}:\t${set[k]}` : l;
    })
    .join('\n');
}

export function writeProcesses(root: string, procs: readonly GenProcess[]): void {
  for (const p of procs) {
    const dir = path.join(root, 'proc', String(p.pid));
    mkdirSync(p.unreadable === 'fd-dir' ? dir : path.join(dir, 'fd'), { recursive: true });
    writeFileSync(path.join(dir, 'status'), processStatus(p));
    writeFileSync(path.join(dir, 'comm'), `${p.comm}\n`);
    writeFileSync(path.join(dir, 'cgroup'), `0::${p.cgroup}\n`);
    if (p.unreadable === 'fd-dir') writeFileSync(path.join(dir, 'fd'), '');
    else if (p.unreadable === 'fd-links') p.fds.forEach((l, fd) => writeFileSync(path.join(dir, 'fd', String(fd)), l));
    else p.fds.forEach((l, fd) => symlinkSync(l, path.join(dir, 'fd', String(fd))));
  }
}

/** A CUDA process's usual fds besides its GPUs' nodes: stdio, the control and UVM nodes, eventfds, a socket. */
export const cudaFds = (...nodes: string[]): string[] => ['/dev/null', 'pipe:[81234]', 'pipe:[81235]', '/dev/nvidiactl', '/dev/nvidia-uvm', ...nodes, 'anon_inode:[eventfd]', 'socket:[77123]'];

/** The node's GPU daemons as DGX/HGX nodes run them (holders-rule.ts names where each comes from), on GPUs minor 0 and 1. */
export const DAEMONS: readonly GenProcess[] = [
  { pid: 1, ppid: 0, comm: 'systemd', uid: 0, cgroup: '/init.scope', fds: ['/dev/null', '/dev/null', '/dev/null', 'anon_inode:[eventfd]', 'socket:[1201]', 'anon_inode:inotify'] },
  { pid: 2101, ppid: 1, comm: 'nvidia-persiste', uid: 999, cgroup: '/system.slice/nvidia-persistenced.service', fds: ['/dev/null', '/dev/null', '/dev/null', 'socket:[2300]', '/dev/nvidiactl', '/dev/nvidia0', '/dev/nvidia1'] },
  { pid: 2102, ppid: 1, comm: 'nv-hostengine', uid: 0, cgroup: '/system.slice/nvidia-dcgm.service', fds: cudaFds('/dev/nvidia0', '/dev/nvidia1') },
  { pid: 2103, ppid: 1, comm: 'nv-fabricmanage', uid: 0, cgroup: '/system.slice/nvidia-fabricmanager.service', fds: ['/dev/null', 'socket:[2400]', '/dev/nvidiactl', '/dev/nvidia0', '/dev/nvidia1', '/dev/nvidia-nvswitchctl', '/dev/nvidia-nvswitch0'] },
  { pid: 2104, ppid: 2050, comm: 'dcgm-exporter', uid: 0, cgroup: '/system.slice/docker-6f0e1c2b9a7d4e3f8c5b1a2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f.scope', fds: cudaFds('/dev/nvidia0', '/dev/nvidia1') },
];
