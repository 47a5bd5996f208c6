// The job's placement, read through the Host: its GPUs (SLURM_JOB_GPUS minors mapped to PCI addresses through
// /proc/driver/nvidia/gpus/*/information, never through PCI order), each GPU's local CPUs and NUMA node
// (drivers/pci/pci-sysfs.c local_cpulist, numa_node), the CPUs and memory nodes the task may use
// (/proc/self/status), and which verbs node belongs to which adapter (/sys/class/infiniband_verbs/*/ibdev,
// drivers/infiniband/core/uverbs_main.c).
import type { Host } from '../host/host.js';
import { readFact, readMinors } from '../inventory/placement.js';
import { listFact } from '../inventory/read.js';
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import { type Allowed, parseAllowed } from '../parsers/proc-status.js';
import { type CpuRanges, parseCpuList, parseNumaNode } from '../parsers/sysfs.js';
import { UVERBS_RE } from '../state/names.js';

export interface GpuPlace {
  readonly minor: number;
  readonly bdf: string;
  /** The kernel's text (shown to the user) and its parse. */
  readonly localCpuList: string | null;
  readonly localCpus: Fact<CpuRanges>;
  readonly numa: Fact<number>;
}

export interface PlacementView {
  /** Device minor → PCI address; absent when the NVIDIA module shows no GPU (no /proc/driver/nvidia/gpus). */
  readonly minors: Fact<ReadonlyMap<number, string>>;
  /** The job's GPUs found in the map, by minor. */
  readonly gpus: ReadonlyMap<number, GpuPlace>;
  readonly allowed: Fact<Allowed>;
  /** Adapter name → its uverbs node name. */
  readonly verbsOf: Fact<ReadonlyMap<string, string>>;
}

async function gpuPlace(host: Host, minor: number, bdf: string): Promise<GpuPlace> {
  const dir = `/sys/bus/pci/devices/${bdf}`;
  const [text, numa] = await Promise.all([host.readText(`${dir}/local_cpulist`), readFact(host, `${dir}/numa_node`, parseNumaNode)]);
  const localCpuList = text.ok ? text.value.trim() : null;
  const p = text.ok ? parseCpuList(text.value) : null;
  // Every PCI device has local_cpulist (drivers/pci/pci-sysfs.c): a missing one is a /sys the job cannot see, not "no affinity".
  const localCpus: Fact<CpuRanges> = !text.ok ? unknown(text.missing ? `${dir}/local_cpulist: not in this job's /sys (${text.reason}): the GPU's local CPUs cannot be compared` : `${dir}/local_cpulist: ${text.reason}`) : p!.ok ? present(p!.value) : unknown(`${dir}/local_cpulist: ${p!.error}`);
  // numa_node -1 (the firmware gave no affinity) is absent, as the inventory has it; so is a missing numa_node beside a
  // readable local_cpulist (a kernel without CONFIG_NUMA). Beside a missing local_cpulist it is unknown: nothing was seen.
  const n: Fact<number> = numa.state === 'present' ? (numa.value === null ? ABSENT : present(numa.value)) : numa.state === 'absent' && !text.ok ? unknown(`${dir}/numa_node: not in this job's /sys`) : numa;
  return { minor, bdf, localCpuList, localCpus, numa: n };
}

async function readVerbsOf(host: Host): Promise<Fact<ReadonlyMap<string, string>>> {
  const ls = await listFact(host, '/sys/class/infiniband_verbs');
  if (ls.state !== 'present') return ls.state === 'absent' ? present(new Map()) : ls;
  const names = ls.value.filter((n) => UVERBS_RE.test(n));
  const ib = await Promise.all(names.map((u) => host.readText(`/sys/class/infiniband_verbs/${u}/ibdev`)));
  return present(new Map(names.flatMap((u, i) => { const r = ib[i]!; return r.ok && r.value.trim() ? [[r.value.trim(), u] as const] : []; })));
}

/** `jobGpus`: the node-wide minors of SLURM_JOB_GPUS; null when the job asked for none. */
export async function readPlacement(host: Host, jobGpus: readonly number[] | null): Promise<PlacementView> {
  const [minors, allowed, verbsOf] = await Promise.all([readMinors(host), readFact(host, '/proc/self/status', parseAllowed), readVerbsOf(host)]);
  const gpus = new Map<number, GpuPlace>();
  if (minors.state === 'present' && jobGpus)
    for (const g of await Promise.all(jobGpus.flatMap((m) => { const b = minors.value.get(m); return b ? [gpuPlace(host, m, b)] : []; }))) gpus.set(g.minor, g);
  return { minors, gpus, allowed, verbsOf };
}
