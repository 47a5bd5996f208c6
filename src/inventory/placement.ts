// What placement is judged by, on the node side: GPU device minors → PCI addresses (the NVIDIA module's
// /proc/driver/nvidia/gpus/<BDF>/information), Slurm's gres.conf, and Slurm's abstract core ids → OS CPUs.
// Shared with the job view (src/task/placement.ts): the same reads as the job's user.
import type { Host } from '../host/host.js';
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import { type GresConf, parseGresConf } from '../parsers/gres-conf.js';
import { parseGpuInformation } from '../parsers/nvidia-gpu.js';
import { type CpuRanges, parseCpuList, type Parsed } from '../parsers/sysfs.js';

const GPUS = '/proc/driver/nvidia/gpus';
const CPU = '/sys/devices/system/cpu';

/** A file parsed: absent when missing, unknown (with the path) when unreadable or malformed. */
export async function readFact<T>(host: Host, kpath: string, parse: (s: string) => Parsed<T>): Promise<Fact<T>> {
  const r = await host.readText(kpath);
  if (!r.ok) return r.missing ? ABSENT : unknown(`${kpath}: ${r.reason}`);
  const p = parse(r.value);
  return p.ok ? present(p.value) : unknown(`${kpath}: ${p.error}`);
}

export async function listFact(host: Host, kpath: string): Promise<Fact<string[]>> {
  const r = await host.list(kpath);
  if (!r.ok) return r.missing ? ABSENT : unknown(`${kpath}: ${r.reason}`);
  return present(r.value);
}

/** Device minor → PCI address; absent when the module shows no GPU directory. */
export async function readMinors(host: Host): Promise<Fact<ReadonlyMap<number, string>>> {
  const ls = await listFact(host, GPUS);
  if (ls.state !== 'present') return ls;
  const infos = await Promise.all(ls.value.map((d) => readFact(host, `${GPUS}/${d}/information`, parseGpuInformation)));
  const out = new Map<number, string>();
  for (const i of infos) {
    // One unreadable file makes the whole map unknown: a minor missing from it would read as "no such GPU".
    if (i.state === 'unknown') return i;
    if (i.state === 'present') out.set(i.value.minor, i.value.bdf);
  }
  return present(out);
}

export const readGres = (host: Host, kpath: string): Promise<Fact<GresConf>> => readFact(host, kpath, parseGresConf);

/**
 * Slurm's abstract core index → that core's OS CPUs. slurmd numbers cores in hwloc's logical order (xcpuinfo.c):
 * packages by their first CPU, then each package's cores by their first CPU; a core's CPUs are its SMT siblings
 * (drivers/base/topology.c core_cpus_list, thread_siblings_list on kernels before 5.7). Read one core at a time:
 * a sibling already seen is skipped, so about two files per core.
 */
export async function readCores(host: Host): Promise<Fact<readonly CpuRanges[]>> {
  const ls = await listFact(host, CPU);
  if (ls.state !== 'present') return ls.state === 'absent' ? unknown(`${CPU}: absent`) : ls;
  const ids = ls.value.filter((n) => /^cpu\d+$/.test(n)).map((n) => Number(n.slice(3))).sort((a, b) => a - b);
  const seen = new Set<number>();
  const cores: { pkg: number; cpus: CpuRanges }[] = [];
  for (const id of ids) {
    if (seen.has(id)) continue;
    const dir = `${CPU}/cpu${id}/topology`;
    let sib = await readFact(host, `${dir}/core_cpus_list`, parseCpuList);
    if (sib.state === 'absent') sib = await readFact(host, `${dir}/thread_siblings_list`, parseCpuList);
    // An offline CPU has no topology directory: it is not a core Slurm counts.
    if (sib.state === 'absent') continue;
    if (sib.state === 'unknown') return sib;
    const pkg = await readFact(host, `${dir}/physical_package_id`, (s) => (/^-?\d{1,6}$/.test(s.trim()) ? { ok: true, value: Number(s.trim()) } : { ok: false, error: 'not a package id' }));
    if (pkg.state !== 'present') return pkg.state === 'unknown' ? pkg : unknown(`${dir}/physical_package_id: absent`);
    for (const [a, b] of sib.value) for (let c = a; c <= b; c++) seen.add(c);
    cores.push({ pkg: pkg.value, cpus: sib.value });
  }
  const first = new Map<number, number>();
  for (const c of cores) first.set(c.pkg, Math.min(first.get(c.pkg) ?? Infinity, c.cpus[0]![0]));
  cores.sort((x, y) => first.get(x.pkg)! - first.get(y.pkg)! || x.cpus[0]![0] - y.cpus[0]![0]);
  return present(cores.map((c) => c.cpus));
}
