// What placement is judged by, on the node side: GPU device minors → PCI addresses (the NVIDIA module's
// /proc/driver/nvidia/gpus/<BDF>/information), Slurm's gres.conf, and Slurm's abstract core ids → OS CPUs.
// Shared with the job view (src/task/placement.ts): the same reads as the job's user.
import { type Host, type ReadResult, readTrusted } from '../host/host.js';
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import { type GresConf, gresItems, type GresRaw, parseGresLines } from '../parsers/gres-conf.js';
import { type Walked, walkIncludes } from '../slurm/include-walk.js';
import { parseGpuInformation } from '../parsers/nvidia-gpu.js';
import { BDF_RE, type CpuRanges, parseCpuList, type Parsed } from '../parsers/sysfs.js';
import { listFact, readWhy } from './read.js';

const GPUS = '/proc/driver/nvidia/gpus';
const VERBS = '/sys/class/infiniband_verbs';

/**
 * Adapter name → its uverbs node, from /sys/class/infiniband_verbs/uverbs<N>/ibdev (drivers/infiniband/core/uverbs_main.c):
 * the job's view (task/placement.ts) and root's, for the job's record (state/prolog.ts). No class: an empty map.
 */
export async function readVerbsOf(host: Host): Promise<Fact<ReadonlyMap<string, string>>> {
  const ls = await listFact(host, VERBS);
  if (ls.state !== 'present') return ls.state === 'absent' ? present(new Map()) : ls;
  const names = ls.value.filter((n) => /^uverbs\d+$/.test(n));
  const ib = await Promise.all(names.map((u) => host.readText(`${VERBS}/${u}/ibdev`)));
  return present(new Map(names.flatMap((u, i) => { const r = ib[i]!; return r.ok && r.value.trim() ? [[r.value.trim(), u] as const] : []; })));
}

/**
 * Each SR-IOV VF among `bdfs` → its PF, from the VF's physfn link (drivers/pci/iov.c makes it in a VF's directory and
 * nowhere else). A function without one (a PF), or whose link cannot be read or names no PCI function, is left out:
 * it is then a card of its own, as before anything was known of VFs.
 */
export async function readPhysfn(host: Host, bdfs: readonly string[]): Promise<ReadonlyMap<string, string>> {
  const links = await Promise.all(bdfs.map((b) => host.readLink(`/sys/bus/pci/devices/${b}/physfn`)));
  return new Map(bdfs.flatMap((b, k) => {
    const r = links[k]!;
    const pf = r.ok ? r.value.slice(r.value.lastIndexOf('/') + 1) : '';
    return BDF_RE.test(pf) && pf !== b ? [[b, pf] as const] : [];
  }));
}

/**
 * Each adapter of `names` (a /sys/class/infiniband listing) → the PCI function its `device` link resolves to
 * (drivers/infiniband/core/sysfs.c: the ib_device's parent; the last element, domains above ffff too: BDF_RE), as
 * whoever reads sees it: the job's own view, for a job without a trusted record of root's (task/placement-judge.ts).
 * Resolved to a device that is no PCI function (siw on a netdev): absent. Missing, dangling or unresolvable (a view
 * that leaves /sys/devices out), or no link at all (a copy): unknown, never a guess.
 */
export async function readAdapterFunctions(host: Host, names: readonly string[]): Promise<ReadonlyMap<string, Fact<string>>> {
  const links = names.map((n) => `/sys/class/infiniband/${n}/device`);
  const real = await Promise.all(links.map((l) => host.realPath(l)));
  return new Map(names.map((n, k): [string, Fact<string>] => {
    const r = real[k]!;
    const l = links[k]!;
    if (!r.ok) return [n, unknown(r.missing ? `${l}: missing, or a link to nothing, in this job's /sys (ENOENT)` : readWhy(l, r.reason))];
    const last = r.value.slice(r.value.lastIndexOf('/') + 1);
    if (BDF_RE.test(last)) return [n, present(last)];
    return [n, r.value.endsWith(`/${n}/device`) ? unknown(`${l}: not a link, so its PCI function cannot be told`) : ABSENT];
  }));
}

const CPU = '/sys/devices/system/cpu';

/** A file parsed: absent when missing, unknown (with the path) when unreadable or malformed. */
export async function readFact<T>(host: Host, kpath: string, parse: (s: string) => Parsed<T>): Promise<Fact<T>> {
  const r = await host.readText(kpath);
  if (!r.ok) return r.missing ? ABSENT : unknown(`${kpath}: ${r.reason}`);
  const p = parse(r.value);
  return p.ok ? present(p.value) : unknown(`${kpath}: ${p.error}`);
}

/** Device minor → PCI address; absent when the module shows no GPU directory. */
export async function readMinors(host: Host): Promise<Fact<ReadonlyMap<number, string>>> {
  const ls = await listFact(host, GPUS);
  if (ls.state !== 'present') return ls;
  const infos = await Promise.all(ls.value.map((d) => readFact(host, `${GPUS}/${d}/information`, parseGpuInformation)));
  const out = new Map<number, string>();
  const seen = new Map<string, number>();
  for (const [k, i] of infos.entries()) {
    // One unreadable file makes the whole map unknown: a minor missing from it would read as "no such GPU".
    if (i.state === 'unknown') return i;
    if (i.state !== 'present') continue;
    const { minor, bdf } = i.value;
    // Two files claiming one minor (or one address): the module's map is not one, and which GPU /dev/nvidiaN opens cannot be told.
    const twin = out.get(minor);
    if (twin !== undefined) return unknown(`${GPUS}/${ls.value[k]}/information: Device Minor ${minor} also claimed by ${twin}`);
    const other = seen.get(bdf);
    if (other !== undefined) return unknown(`${GPUS}/${ls.value[k]}/information: Bus Location ${bdf} also claimed by minor ${other}`);
    const dir = ls.value[k]!;
    if (BDF_RE.test(dir.toLowerCase()) && dir.toLowerCase() !== bdf) return unknown(`${GPUS}/${dir}/information: Bus Location ${bdf} in another GPU's directory`);
    out.set(minor, bdf);
    seen.set(bdf, minor);
  }
  return present(out);
}

/** Device minor → the GPU's model (its information file's `Model:`, null where it has none): for slurmd's GPU types. */
export async function readModels(host: Host): Promise<Fact<ReadonlyMap<number, string | null>>> {
  const ls = await listFact(host, GPUS);
  if (ls.state !== 'present') return ls;
  const out = new Map<number, string | null>();
  for (const d of ls.value) {
    const i = await readFact(host, `${GPUS}/${d}/information`, parseGpuInformation);
    if (i.state !== 'present') return i.state === 'unknown' ? i : unknown(`${GPUS}/${d}/information: gone`);
    out.set(i.value.minor, i.value.model);
  }
  return present(out);
}

/** A real gres.conf is a few KiB (a line per GPU type and node group); more, its Includes counted, is not parsed. */
export const GRES_MAX_BYTES = 256 * 1024;
/** Files taken in, gres.conf and each Include's. */
const GRES_MAX_FILES = 64;

/** gres.conf and the files it includes, read as slurmd reads them (slurm/include-walk.ts); unknown where any is not. */
export async function readGres(host: Host, kpath: string): Promise<Fact<GresConf>> {
  // Root's alone: the placement check, and the numbering the job's record gives its TaskProlog, follow what it says.
  const read = async (f: string): Promise<ReadResult<string>> => {
    const r = await readTrusted(host, f, () => host.readBytes(f, GRES_MAX_BYTES + 1));
    if (!r.ok) return r;
    if (r.value.length > GRES_MAX_BYTES) return { ok: false, missing: false, reason: `larger than ${GRES_MAX_BYTES / 1024} KiB, not read` };
    return { ok: true, value: Buffer.from(r.value).toString('utf8') };
  };
  const top = await read(kpath);
  if (!top.ok && top.missing) return ABSENT;
  let walked: Walked<GresRaw>;
  try {
    walked = await walkIncludes(host, kpath, {
      read: (f) => (f === kpath ? Promise.resolve(top) : read(f)),
      parse: gresItems,
      // gres.conf has no ClusterName for `%c` (parse_config.c _parse_for_format): slurmd refuses the file.
      expand: (inc) => (inc.target.includes('%c') ? { ok: false, problem: `${inc.file}:${inc.line}: Include ${inc.target}: %c and no ClusterName in gres.conf (slurmd would not start)` } : { ok: true, value: inc.target }),
      maxFiles: GRES_MAX_FILES,
      maxText: GRES_MAX_BYTES,
      maxTextWords: `${GRES_MAX_BYTES / 1024} KiB`,
      missingMeans: ' (slurmd would not start)',
    });
  } catch (e) {
    return unknown((e as Error).message);
  }
  if (walked.problems.length) return unknown(walked.problems[0]!);
  const p = parseGresLines(walked.entries, kpath);
  return p.ok ? present(p.value) : unknown(p.error);
}

/** First index of sorted `xs` holding a value >= x. */
function lowerBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const cpuText = (r: CpuRanges): string => r.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',');

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
  const done: boolean[] = new Array<boolean>(ids.length).fill(false);
  const cores: { pkg: number; cpus: CpuRanges }[] = [];
  for (const [k, id] of ids.entries()) {
    if (done[k]) continue;
    const dir = `${CPU}/cpu${id}/topology`;
    let name = 'core_cpus_list';
    let sib = await readFact(host, `${dir}/${name}`, parseCpuList);
    if (sib.state === 'absent') sib = await readFact(host, `${dir}/${(name = 'thread_siblings_list')}`, parseCpuList);
    if (sib.state === 'unknown') return sib;
    if (sib.state === 'absent') {
      // An offline CPU has no topology directory (drivers/base/topology.c removes it): not a core Slurm counts.
      const d = await host.lstat(dir);
      if (!d.ok && d.missing) continue;
      // A topology directory without either list: which CPUs share this core cannot be told (never "no core").
      return unknown(d.ok ? `${dir}: neither core_cpus_list nor thread_siblings_list` : `${dir}: ${d.reason}`);
    }
    if (!sib.value.length || !sib.value.some(([a, b]) => id >= a && id <= b)) return unknown(`${dir}/${name}: ${JSON.stringify(cpuText(sib.value))} does not hold cpu${id}`);
    const pkg = await readFact(host, `${dir}/physical_package_id`, (s) => (/^-?\d{1,6}$/.test(s.trim()) ? { ok: true, value: Number(s.trim()) } : { ok: false, error: 'not a package id' }));
    if (pkg.state !== 'present') return pkg.state === 'unknown' ? pkg : unknown(`${dir}/physical_package_id: absent`);
    // Mark the siblings by walking the sorted ids inside each range: work by CPUs listed, never by the range's width.
    for (const [a, b] of sib.value) for (let j = lowerBound(ids, a); j < ids.length && ids[j]! <= b; j++) done[j] = true;
    cores.push({ pkg: pkg.value, cpus: sib.value });
  }
  if (!cores.length) return unknown(ids.length ? `${CPU}: no online CPU with a topology directory` : `${CPU}: no cpuN entry (a capture or view without the CPUs)`);
  const first = new Map<number, number>();
  for (const c of cores) first.set(c.pkg, Math.min(first.get(c.pkg) ?? Infinity, c.cpus[0]![0]));
  cores.sort((x, y) => first.get(x.pkg)! - first.get(y.pkg)! || x.cpus[0]![0] - y.cpus[0]![0]);
  return present(cores.map((c) => c.cpus));
}
