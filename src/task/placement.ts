// The job's placement, read through the Host: its GPUs (the step's SLURM_STEP_GPUS when they are the job's, else
// SLURM_JOB_GPUS: Slurm's GPU numbers, mapped to PCI addresses by the Prolog's signed order, state/gpu-order.ts; without
// one only when the minors are in PCI order, /proc/driver/nvidia/gpus/*/information), each GPU's local CPUs and NUMA node
// (drivers/pci/pci-sysfs.c local_cpulist, numa_node), the CPUs and memory nodes the task may use
// (/proc/self/status), and which verbs node belongs to which adapter (/sys/class/infiniband_verbs/*/ibdev,
// drivers/infiniband/core/uverbs_main.c).
import type { Host } from '../host/host.js';
import { readFact, readMinors, readVerbsOf } from '../inventory/placement.js';
import { ABSENT, type Fact, present, unknown } from '../model/fact.js';
import { type Allowed, parseAllowed } from '../parsers/proc-status.js';
import { type CpuRanges, parseCpuList, parseNumaNode } from '../parsers/sysfs.js';
import { agreedOrder, type GpuOrder } from '../state/gpu-order.js';
import { parseJobGpus } from '../state/prolog.js';

export interface GpuPlace {
  /** Slurm's number of the GPU (SLURM_JOB_GPUS), as `gdrgate topo` numbers GPUs where Slurm uses PCI order. */
  readonly id: number;
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
  /** The GPUs judged (the step's or the job's, by Slurm's numbers); null: the job asked for none; no ids: the step was given none. */
  readonly sel: GpuSelection | null;
  /** Slurm's number → PCI address: the Prolog's (signed), or the one all numberings agree on, or why not known. */
  readonly order: GpuOrder;
  /** The judged GPUs found in the order, by Slurm's number. */
  readonly gpus: ReadonlyMap<number, GpuPlace>;
  readonly allowed: Fact<Allowed>;
  /** Adapter name → its uverbs node name. */
  readonly verbsOf: Fact<ReadonlyMap<string, string>>;
}

export interface GpuSelection {
  readonly ids: readonly number[];
  readonly from: 'SLURM_STEP_GPUS' | 'SLURM_JOB_GPUS';
}

/** The step variables the GPU selection reads (the TaskProlog's environment). */
export interface StepEnv {
  readonly SLURM_STEP_GPUS?: string | undefined;
  readonly SLURM_GPUS_ON_NODE?: string | undefined;
  readonly SLURM_STEP_ID?: string | undefined;
}

/** Slurm's ordinary step numbers (srun, ext launcher): below SLURM_MAX_NORMAL_STEP_ID (0xfffffff0); batch, extern and interactive steps are above it. */
export const normalStep = (id: string | undefined): boolean => id !== undefined && /^(0|[1-9]\d{0,9})$/.test(id) && Number(id) < 0xfffffff0;

/**
 * SLURM_STEP_GPUS as slurmstepd sets it: the step's GPUs; [] where it says the step has none: `NoDevFiles` or empty
 * (older Slurm), or, in an ordinary step, unset together with SLURM_GPUS_ON_NODE (gres_common_gpu_set_env since 22.05
 * unsets both for a step given no GPU, `srun --gres=none` inside a GPU job, while the job's SLURM_JOB_GPUS stays in the
 * inherited environment; a batch or interactive step gets the job's variables, SLURM_GPUS_ON_NODE among them, and an
 * ext launcher's step all of the job's GPUs in SLURM_STEP_GPUS); null when unset otherwise or malformed.
 */
export function parseStepGpus(env: StepEnv): number[] | null {
  const s = env.SLURM_STEP_GPUS;
  if (s === undefined) return env.SLURM_GPUS_ON_NODE === undefined && normalStep(env.SLURM_STEP_ID) ? [] : null;
  return s === 'NoDevFiles' || s === '' ? [] : parseJobGpus(s);
}

/**
 * The GPUs this task uses: slurmstepd sets SLURM_STEP_GPUS per task (gres_g_task_set_env) before the TaskProlog runs;
 * taken when they are among the job's (the signed record's when `trusted`), else the job's. Never a GPU not the job's.
 * A step Slurm gave no GPU (`step` empty) uses none, whatever the job holds: no ids, from SLURM_STEP_GPUS.
 * Without a trusted record the job's list is the environment's, which in an `ordinary` step (`normalStep`) is the one
 * inherited from the batch step: slurmstepd sets SLURM_JOB_GPUS only for batch, interactive and external-launcher
 * steps (slurmstepd.c gres_g_job_set_env), so on every node but the batch step's it names that node's GPUs, while the
 * ordinary step's SLURM_STEP_GPUS, set or unset by slurmstepd on this node, is this node's: taken as it is.
 */
export function selectGpus(job: readonly number[] | null, step: readonly number[] | null, trusted: boolean, ordinary = false): GpuSelection | null {
  // (A job with no GPU at all is said as such: null, whatever the step's variables.)
  if (step !== null && step.length === 0) return job?.length ? { ids: [], from: 'SLURM_STEP_GPUS' } : null;
  const mine = new Set(job);
  if (step?.length && (job === null ? !trusted : (ordinary && !trusted) || step.every((s) => mine.has(s)))) return { ids: step, from: 'SLURM_STEP_GPUS' };
  return job?.length ? { ids: job, from: 'SLURM_JOB_GPUS' } : null;
}

async function gpuPlace(host: Host, id: number, minor: number, bdf: string): Promise<GpuPlace> {
  const dir = `/sys/bus/pci/devices/${bdf}`;
  const [text, numa] = await Promise.all([host.readText(`${dir}/local_cpulist`), readFact(host, `${dir}/numa_node`, parseNumaNode)]);
  const localCpuList = text.ok ? text.value.trim() : null;
  const p = text.ok ? parseCpuList(text.value) : null;
  // Every PCI device has local_cpulist (drivers/pci/pci-sysfs.c): a missing one is a /sys the job cannot see, not "no affinity".
  const localCpus: Fact<CpuRanges> = !text.ok ? unknown(text.missing ? `${dir}/local_cpulist: not in this job's /sys (ENOENT): the GPU's local CPUs cannot be compared` : `${dir}/local_cpulist: ${text.reason}`) : p!.ok ? present(p!.value) : unknown(`${dir}/local_cpulist: ${p!.error}`);
  // numa_node -1 (the firmware gave no affinity) is absent, as the inventory has it; so is a missing numa_node beside a
  // readable local_cpulist (a kernel without CONFIG_NUMA). Beside a missing local_cpulist it is unknown: nothing was seen.
  const n: Fact<number> = numa.state === 'present' ? (numa.value === null ? ABSENT : present(numa.value)) : numa.state === 'absent' && !text.ok ? unknown(`${dir}/numa_node: not in this job's /sys`) : numa;
  return { id, minor, bdf, localCpuList, localCpus, numa: n };
}

/**
 * The order all numberings agree on, from the minors this job sees; `named`: every number Slurm gave (the job's, the
 * step's). The minors are the node's only where each of those numbers is among them: a container shows only its own
 * GPUs (nvidia-container-cli binds their /proc/driver/nvidia/gpus directories alone), whose minors may run 0..n-1 in
 * PCI order though Slurm's numbers for them do not (GPUs 1 and 4 of eight, minors 0 and 1: "GPU 1" is not minor 1).
 */
function agreedHere(minors: ReadonlyMap<number, string>, noRecord: string, named: readonly number[]): GpuOrder {
  const beyond = named.find((n) => n >= minors.size);
  if (beyond === undefined) return agreedOrder(minors, noRecord);
  return { ok: false, why: `${noRecord}, and Slurm's GPU ${beyond} is not among the ${minors.size} GPUs /proc/driver/nvidia/gpus shows this job (a container's share of the node's, or not GPUs): their minors do not number Slurm's GPUs` };
}

/** `recorded`: the Prolog's order (trusted); null: none, and `noRecord` says why (then only an agreed order is used, `named` the numbers Slurm gave). */
export async function readPlacement(host: Host, sel: GpuSelection | null, recorded: GpuOrder | null, noRecord: string, named: readonly number[] = sel?.ids ?? []): Promise<PlacementView> {
  const [minors, allowed, verbsOf] = await Promise.all([readMinors(host), readFact(host, '/proc/self/status', parseAllowed), readVerbsOf(host)]);
  const order: GpuOrder = recorded ?? (minors.state === 'present' ? agreedHere(minors.value, noRecord, named) : { ok: false, why: minors.state === 'unknown' ? minors.why : 'no /proc/driver/nvidia/gpus: the GPUs cannot be mapped to PCI addresses' });
  const gpus = new Map<number, GpuPlace>();
  if (order.ok && sel)
    for (const g of await Promise.all(sel.ids.flatMap((id) => { const o = order.gpus[id]; return o ? [gpuPlace(host, id, o.minor, o.bdf)] : []; }))) gpus.set(g.id, g);
  return { minors, sel, order, gpus, allowed, verbsOf };
}
