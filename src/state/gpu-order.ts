// Slurm's GPU numbers → PCI devices. SLURM_JOB_GPUS, SLURM_STEP_GPUS and CUDA_VISIBLE_DEVICES hold gres_device->index
// (src/plugins/gres/common/gres_common.c: global_env_index = use_dev_num ? dev_num : index; only gres/nic sets
// use_dev_num), never the /dev/nvidia minor. slurmd gives the index by its final GPU list (src/interfaces/gres.c
// _foreach_fill_in_gres_devices, one per File= entry in list order):
//  - AutoDetect=nvml: the list is sorted by Links, "a stand-in for PCI bus ID order" (src/plugins/gres/gpu/gres_gpu.c
//    _sort_gpu_by_links_order after _sort_gpu_by_file): index i is the i-th NVIDIA GPU in PCI bus order.
//  - AutoDetect=nvidia (gpu/nvidia: no Links, so the sort by File= stands): index i is the i-th GPU by device minor.
//  - either with File= lines: only the GPUs they name, where the lines hold nothing slurmd compares with what it found.
//  - no AutoDetect (gpu/generic: no system list, nothing sorted): the gres.conf lines as slurmd read them, the lines
//    that begin with Name= first, then those that begin with NodeName= (gres.c _parse_gres_conf_locked), each File=
//    expanded in order; /dev/nvidia<minor> → its PCI address through /proc/driver/nvidia/gpus/*/information.
//  - no gres.conf or no GPU line for the node: only when the minors are 0..n-1 in PCI bus order do all numberings
//    agree; otherwise which GPU is meant is not known. Anything else not modelled: not derived (state/slurm-gpus.ts).
// Pure: the Prolog computes it as root (state/slurm-gpus.ts) and signs it into the job's record; the TaskProlog judges
// the devices it names (and, without a record, only the agreed order).

export interface SlurmGpu {
  readonly bdf: string;
  readonly minor: number;
}

/** Slurm's index i → gpus[i]; or why that cannot be told. */
export type GpuOrder = { readonly ok: true; readonly how: string; readonly gpus: readonly SlurmGpu[] } | { readonly ok: false; readonly why: string };

export const byBdf = (a: SlurmGpu, b: SlurmGpu): number => (a.bdf < b.bdf ? -1 : a.bdf > b.bdf ? 1 : 0);

/** The NVIDIA GPUs in PCI bus order (the order NVML enumerates them). */
export function pciOrder(minors: ReadonlyMap<number, string>): SlurmGpu[] {
  return [...minors].map(([minor, bdf]) => ({ bdf: bdf.toLowerCase(), minor })).sort(byBdf);
}

/** When the minors are 0..n-1 in PCI bus order, Slurm's index, the minor and NVML's number are one: else not known. */
export function agreedOrder(minors: ReadonlyMap<number, string>, why: string): GpuOrder {
  const pci = pciOrder(minors);
  if (pci.every((g, i) => g.minor === i)) return { ok: true, how: `the device minors are in PCI bus order (${why})`, gpus: pci };
  return { ok: false, why: `${why}, and this node's device minors are not in PCI bus order (${pci.map((g) => `${g.bdf}=minor ${g.minor}`).join(', ')})` };
}

/** The record's field, checked (the signature vouches for it; a mismatch is version skew). */
export function isGpuOrder(v: unknown): v is GpuOrder {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  if (o.ok === false) return typeof o.why === 'string';
  return o.ok === true && typeof o.how === 'string' && Array.isArray(o.gpus) && o.gpus.every((x: unknown) => typeof x === 'object' && x !== null && typeof (x as SlurmGpu).bdf === 'string' && Number.isInteger((x as SlurmGpu).minor));
}
