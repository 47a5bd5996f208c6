// What the Prolog records for one job (signed, read by the TaskProlog) and what the TaskProlog leaves for the epilog.
// Types only: nothing here is loaded at run time.
import type { Status } from '../model/finding.js';
import type { GpuOrder } from './gpu-order.js';
import type { PROLOG_FORMAT, TASK_FORMAT } from './names.js';

export type Bytes = number | 'unlimited';


export interface RecordedAdapter {
  readonly name: string;
  /** Null: its PCI function could not be read, or it has none (a software device: rxe, siw). */
  readonly bdf: string | null;
  readonly uverbs: string | null;
  /**
   * The physical function this one is an SR-IOV VF of (its `physfn` link, drivers/pci/iov.c), as root saw it: a VF and
   * its PF are one card, and a job that can use any function of it has that card. Absent for a PF, a software device,
   * or where the link could not be read (then the function is a card of its own).
   */
  readonly pf?: string;
}

/** The host side of a job, as root saw it in the Prolog. */
export interface PrologState {
  readonly job: string;
  readonly uid: number;
  readonly node: string;
  readonly time: string;
  /** slurmd's RLIMIT_MEMLOCK (the Prolog inherits it; DESIGN §5); null when it could not be read. */
  readonly memlock: { readonly who: string; readonly soft: Bytes; readonly hard: Bytes } | null;
  /** The baseline class minimum the Prolog judged with; null when the class has none to give. */
  readonly memlockMin: Bytes | null;
  /** /sys/class/infiniband entries (mlx5_0, …). */
  readonly hcas: readonly string[];
  /** /dev/infiniband entries named uverbs<N>. */
  readonly uverbs: readonly string[];
  /** /dev entries named nvidia* (nvidia0, nvidiactl, nvidia-uvm, …). */
  readonly nvidia: readonly string[];
  /** GPU PCI functions of the node. */
  readonly gpus: readonly string[];
  /**
   * Each adapter of the host as root saw it: its name, PCI function and uverbs node (/sys/class/infiniband_verbs/<node>/ibdev),
   * which a container may hide from the job (enroot's 99-mellanox.sh keeps only the adapters it shows). Absent in an older
   * gdrgate's record, and left out of one that would be too large for the TaskProlog to read (hundreds of VFs).
   */
  readonly adapters?: readonly RecordedAdapter[];
  /** SLURM_JOB_GPUS: Slurm's GPU numbers (gres_device->index, not device minors); null when the job asked for none. */
  readonly jobGpus: readonly number[] | null;
  /**
   * Slurm's GPU number i → slurmGpus.gpus[i] (bus id and minor), as slurmd on this node numbers them (state/gpu-order.ts),
   * or why that could not be told. Absent in a record of an older gdrgate (the format stays /1: the field is optional).
   */
  readonly slurmGpus?: GpuOrder;
  /**
   * The node's NCCL topology file in the job's directory (src/state/names.ts NCCL_TOPO_FILE) and the host's kernel
   * path of every GPU and adapter it names (bus id → /sys/devices/...), which the TaskProlog compares with the job's
   * view; absent when the class does not hand one (baseline ncclTopo) or it could not be written.
   */
  readonly ncclTopo?: { readonly file: string; readonly paths: Readonly<Record<string, string>> };
}

/** prolog.json: the payload's exact text and an Ed25519 signature over its UTF-8 bytes. */
export interface SignedEnvelope {
  readonly format: typeof PROLOG_FORMAT;
  readonly payload: string;
  readonly signature: string;
}

export interface TaskFindingRecord {
  readonly code: string;
  readonly status: Status;
  readonly subject: string;
  readonly message: string;
}

/** task.json: written by the job's user, so the epilog treats every field as untrusted input. */
export interface TaskRecord {
  readonly format: typeof TASK_FORMAT;
  readonly job: string;
  readonly step: string | null;
  readonly uid: number;
  readonly node: string;
  readonly time: string;
  readonly state: 'trusted' | 'missing' | 'untrusted' | 'unreadable';
  readonly memlock: { readonly soft: Bytes; readonly hard: Bytes; readonly source: string } | null;
  readonly findings: readonly TaskFindingRecord[];
}
