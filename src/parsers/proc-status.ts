// /proc/<pid>/status placement lines (fs/proc/array.c task_cpus_allowed, cpuset_task_status_allowed): the CPUs
// and memory nodes the task may use, as cpulists ("0-15,32-47"), after sched_setaffinity and the cpuset cgroup.
import { type CpuRanges, type Parsed, parseCpuList } from './sysfs.js';

export interface Allowed {
  readonly cpus: CpuRanges;
  readonly cpuList: string;
  readonly mems: CpuRanges;
  readonly memList: string;
}

/** One `Key:\tvalue` line of /proc/<pid>/status, trimmed; null when there is none. */
export function statusField(text: string, key: string): string | null {
  const m = new RegExp(`^${key}:[ \\t]*(.*)$`, 'm').exec(text);
  return m ? m[1]!.trim() : null;
}

/** A field of numbers ("Uid:\t1000\t1000\t1000\t1000", "Groups:\t4 27"), as written; [] when there is none. */
export const statusWords = (text: string, key: string): string[] => (statusField(text, key) ?? '').split(/\s+/).filter(Boolean);

export function parseAllowed(text: string): Parsed<Allowed> {
  const cpuList = statusField(text, 'Cpus_allowed_list');
  const memList = statusField(text, 'Mems_allowed_list');
  if (cpuList === null) return { ok: false, error: 'no Cpus_allowed_list line' };
  if (memList === null) return { ok: false, error: 'no Mems_allowed_list line' };
  const cpus = parseCpuList(cpuList);
  if (!cpus.ok) return { ok: false, error: `Cpus_allowed_list: ${cpus.error}` };
  const mems = parseCpuList(memList);
  if (!mems.ok) return { ok: false, error: `Mems_allowed_list: ${mems.error}` };
  // An empty set is not a placement the kernel allows a running task: it is a malformed file.
  if (!cpus.value.length || !mems.value.length) return { ok: false, error: 'empty Cpus_allowed_list or Mems_allowed_list' };
  return { ok: true, value: { cpus: cpus.value, cpuList, mems: mems.value, memList } };
}
