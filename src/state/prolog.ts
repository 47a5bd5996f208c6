// Prolog side of the handoff: what root saw for this job, signed, in stateDir/job-<id>/prolog.json, the
// directory then given to the job's user (0700: no other user can list or read it). Off the gate's critical
// path: a few synchronous syscalls and one Ed25519 signature, no process; the agent writes it after its answer.
import type { Host } from '../host/host.js';
import type { Inventory } from '../model/inventory.js';
import { readPhysfn, readVerbsOf } from '../inventory/placement.js';
import { jobDirName, MAX_STATE_BYTES, NCCL_TOPO_FILE, NVIDIA_RE, parseId, parseJobId, PROLOG_FILE, PROLOG_FORMAT, UVERBS_RE } from './names.js';
import { loadOrCreateKey, signText } from './sign.js';
import { makeDir, removeTree, someNames } from '../host/dirs.js';
import { lstatOrNull } from '../host/files.js';
import { mountAt, mountsBelow } from '../host/mounts.js';
import { chown } from '../host/entries.js';
import { writeNew } from '../host/files.js';
import { ensureStateDir, lookHeld, removeJobDir } from './store.js';
import type { Bytes, PrologState, RecordedAdapter, SignedEnvelope } from './types.js';
import type { GpuOrder } from './gpu-order.js';

/** More GPU numbers than a node has (MIG instances included) by far: a longer list is no list of Slurm's. */
export const MAX_GPU_IDS = 1024;

/**
 * SLURM_JOB_GPUS / SLURM_STEP_GPUS ("0,1,3"): Slurm's GPU numbers (state/gpu-order.ts), each once; null when absent,
 * empty, malformed or longer than MAX_GPU_IDS (a job's own facts reach the agent: a list of 60,000 cost it seconds).
 */
export function parseJobGpus(s: string | undefined): number[] | null {
  if (!s || s.length > MAX_GPU_IDS * 5 || !/^\d{1,4}(,\d{1,4})*$/.test(s)) return null;
  const ids = [...new Set(s.split(',').map(Number))];
  return ids.length <= MAX_GPU_IDS ? ids : null;
}

/** The record's own fields as they are, and what the rest of it is made from. */
export type StateInput = Pick<PrologState, 'job' | 'uid' | 'node' | 'memlockMin' | 'jobGpus' | 'slurmGpus'> & {
  readonly inv: Inventory;
  readonly devInfiniband: readonly string[];
  /** Adapter name → its uverbs node (/sys/class/infiniband_verbs); null: that class could not be read. */
  readonly verbsOf?: ReadonlyMap<string, string> | null;
  /** An SR-IOV VF's PCI function → its PF's (the VF's physfn link); absent: none read. */
  readonly physfn?: ReadonlyMap<string, string>;
  readonly dev: readonly string[];
  readonly now: Date;
};

function adapterOf(n: Inventory['nics'][number], verbsOf: ReadonlyMap<string, string>, physfn: ReadonlyMap<string, string> | undefined): RecordedAdapter {
  const bdf = n.bdf.state === 'present' ? n.bdf.value : null;
  const pf = bdf === null ? undefined : physfn?.get(bdf);
  return { name: n.name, bdf, uverbs: verbsOf.get(n.name) ?? null, ...(pf !== undefined ? { pf } : {}) };
}

/** Pure: the record from the inventory the gate already gathered. */
export function buildPrologState(i: StateInput): PrologState {
  // The Prolog inherits slurmd's limits: its own limit stands in when slurmd's process was not found or not read.
  const ml = i.inv.memlock.find((m) => m.who === 'slurmd' && m.limit.state === 'present') ?? i.inv.memlock.find((m) => m.who === 'self');
  return {
    job: i.job,
    uid: i.uid,
    node: i.node,
    time: i.now.toISOString(),
    memlock: ml?.limit.state === 'present' ? { who: ml.who, soft: ml.limit.value.soft, hard: ml.limit.value.hard } : null,
    memlockMin: i.memlockMin,
    hcas: i.inv.nics.map((n) => n.name),
    uverbs: i.devInfiniband.filter((n) => UVERBS_RE.test(n)).sort(),
    nvidia: i.dev.filter((n) => NVIDIA_RE.test(n)).sort(),
    gpus: i.inv.gpus.map((g) => g.bdf),
    ...(i.verbsOf ? { adapters: i.inv.nics.map((n) => adapterOf(n, i.verbsOf!, i.physfn)) } : {}),
    jobGpus: i.jobGpus,
    ...(i.slurmGpus ? { slurmGpus: i.slurmGpus } : {}),
  };
}

/** A file written beside prolog.json (read-only, root's) before the directory is handed to the job's user. */
export interface JobFile {
  readonly name: string;
  readonly data: string;
}

/** The job's directory as beginJobState made it (its device and inode): the record goes there and nowhere else. */
export interface Begun {
  readonly dev: number;
  readonly ino: number;
}

/**
 * Why `dir` is no longer the directory `begun` names (this process's, 0700); null: it still is. Looked at only where no
 * mount is on it (a user's FUSE daemon would answer root's lstat, or never). Gone or replaced: the job ended (its
 * Epilog ran) before its record was written, and no directory is made again for it.
 */
function notBegun(stateDir: string, dir: string, begun: Begun, mounts: readonly string[] = mountsBelow(stateDir)): string | null {
  const mount = mountAt(mounts, dir);
  if (mount !== null) return `${mount} is a mount: not entered`;
  // As held: a mount made on it since `mounts` was read (a user's, on an old run's directory) is told, never asked.
  const st = lookHeld(stateDir, dir.slice(stateDir.length + 1));
  if (st === 'mount') return `${dir} is a mount: not entered`;
  const ours = st !== null && st.isDirectory() && st.dev === begun.dev && st.ino === begun.ino && st.uid === (process.getuid?.() ?? 0) && (st.mode & 0o777) === 0o700;
  return ours ? null : replaced(dir);
}

const replaced = (dir: string): string => `${dir} is no longer the directory begun for the job before its Prolog's answer (its Epilog ran?): no record written`;

/** The record goes only into the directory begun, still empty. Returns the mount table it looked at the directory by. */
function stillBegun(stateDir: string, dir: string, begun: Begun): readonly string[] {
  const mounts = mountsBelow(stateDir);
  const why = notBegun(stateDir, dir, begun, mounts) ?? (someNames(dir, 1).length ? replaced(dir) : null);
  if (why !== null) throw new Error(why);
  return mounts;
}

/**
 * Writes the signed state (and `extra` files) into the job's directory: `begun`, beginJobState's, else a fresh one;
 * then hands the directory to `uid`. `handOver` (the agent's: the job's TaskProlog FIFO) runs just before, so that a
 * task that finds the directory its user's finds the FIFO too; it is given the mount table read here (mountsBelow).
 */
export function writePrologState(stateDir: string, state: PrologState, gid: number | null, extra: readonly JobFile[] = [], handOver?: (mounts: readonly string[]) => void, begun?: Begun): string {
  ensureStateDir(stateDir);
  const key = loadOrCreateKey(stateDir);
  const dir = `${stateDir}/${jobDirName(state.job)}`;
  // A directory left by an earlier attempt of this id (requeue, crashed epilog) is not trusted: start clean. (Begun:
  // the Prolog cleared it, and the FIFO, before its answer; the FIFO handed over since is kept.) The mount table is
  // read here, once: from here to the chown below nothing waits (no await), and the directory is root's, 0700 (begun,
  // or made below), until that chown, so no user can mount at or in it; the hand-over looks by this table, as the chown
  // relies on it. Not the table beginJobState read: since, the answer went out, and another run for the job (one whose
  // answer came too late) or its Epilog may have given a directory of that name to the user, who may mount on it.
  let mounts: readonly string[];
  if (begun) mounts = stillBegun(stateDir, dir, begun);
  else {
    mounts = mountsBelow(stateDir);
    const old = removeJobDir(stateDir, state.job, undefined, { mounts, keepFifo: true });
    if (!old.ok && old.setAside === null) throw new Error(old.why);
  }
  const sealed = (st: PrologState): string => {
    const payload = JSON.stringify(st);
    const env: SignedEnvelope = { format: PROLOG_FORMAT, payload, signature: signText(payload, key) };
    return JSON.stringify(env) + '\n';
  };
  // The TaskProlog reads at most MAX_STATE_BYTES (a larger file is refused as untrusted): on a node with hundreds of
  // RDMA devices (SR-IOV VFs) the optional adapters go first, and a record still too large is not written (the job's
  // tasks then read "no record", a skip, where they would have read tampering).
  let text = sealed(state);
  if (Buffer.byteLength(text) > MAX_STATE_BYTES && state.adapters) {
    const { adapters: _, ...rest } = state;
    text = sealed(rest);
  }
  if (Buffer.byteLength(text) > MAX_STATE_BYTES) throw new Error(`the job's record would take ${Buffer.byteLength(text)} bytes, more than the ${MAX_STATE_BYTES} the TaskProlog reads: not written`);
  if (!begun) makeDir(dir, 0o700);
  try {
    // Written while the directory is still root's, so the user has nothing to race against.
    writeNew(`${dir}/${PROLOG_FILE}`, text, 0o444);
    for (const f of extra) writeNew(`${dir}/${f.name}`, f.data, 0o444);
    handOver?.(mounts);
    chown(dir, state.uid, gid ?? -1);
  } catch (e) {
    // A root-owned directory left behind (stateDir full) would read to the TaskProlog as the user's tampering;
    // without it the job is told "missing state", which is what happened. Still root's: nothing of the user's inside.
    removeTree(dir);
    throw e;
  }
  return `${dir}/${PROLOG_FILE}`;
}

/** A /dev listing for the record: absent is none; one that fails otherwise throws (a record saying "no verbs devices"
 * would hide from every task of the job the very adapters it cannot see). */
async function names(host: Host, kpath: string): Promise<string[]> {
  const r = await host.list(kpath);
  if (r.ok) return r.value;
  if (r.missing) return [];
  throw new Error(`${kpath} could not be listed (${r.reason}): no job record, since it would list none of its devices`);
}

export interface RecordInput {
  /** Called once the record is written, before the directory is the job user's, with the mount table read for it (writePrologState). */
  readonly handOver?: (mounts: readonly string[]) => void;
  /** The directory beginJobState made before the answer: written into, or dropped when the record fails. */
  readonly begun?: Begun | null;
  readonly stateDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly node: string;
  readonly host: Host;
  readonly inv: Inventory;
  readonly memlockMin: Bytes | null;
  /** The class hands jobs the node's NCCL topology file (baseline ncclTopo). */
  readonly ncclTopo?: boolean | undefined;
}

/** The NCCL topology file for the job and the host paths it names (throws when it cannot be made). */
async function ncclTopoFile(host: Host, inv: Inventory): Promise<{ file: JobFile; paths: Record<string, string> }> {
  const { ncclTopo, renderNcclXml } = await import('../topo/nccl-read.js');
  const { root, endpoints } = await ncclTopo(host, inv);
  const xml = renderNcclXml(root);
  const paths: Record<string, string> = {};
  // Each GPU's and adapter's own path (an adapter's file element may be the function NCCL merges it into).
  for (const e of endpoints) {
    const own = e.own ?? e.sysPath;
    paths[own.slice(own.lastIndexOf('/') + 1)] = own;
  }
  return { file: { name: NCCL_TOPO_FILE, data: xml }, paths };
}

/** slurmd's numbering, from gres.conf, the minors and (only where it decides) the slurm.conf slurmd was given. */
async function gpuOrder(i: RecordInput): Promise<GpuOrder> {
  const { nodeGpuOrder, slurmConfPath } = await import('./slurm-gpus.js');
  return nodeGpuOrder(i.host, i.inv.placement, i.node, slurmConfPath(i.env, i.inv.placement.gresPath));
}

/** `level`: nothing to record outside a job (a run by hand), a warning for a malformed id, an error otherwise. */
export type RecordResult =
  | { readonly ok: true; readonly file: string; readonly ms: number; readonly ncclTopoWhy?: string }
  | { readonly ok: false; readonly level: 'skip' | 'warn' | 'error'; readonly why: string };

/**
 * Before a passing Prolog's answer: what an earlier attempt of this job id left (its directory, its TaskProlog FIFO)
 * goes, and the job's directory is made, root's, empty, 0700: a task that comes before this run's record is written
 * into it (recordJobState, after the answer) finds it not yet its user's and waits (slurm/taskprolog.sh), never the
 * last run's record or kept answers. Null where nothing was begun (recordJobState then starts clean and says why).
 */
export function beginJobState(stateDir: string, env: NodeJS.ProcessEnv): Begun | null {
  const job = parseJobId(env.SLURM_JOB_ID);
  if (job === null || parseId(env.SLURM_JOB_UID) === null) return null;
  try {
    ensureStateDir(stateDir);
    if (!removeJobDir(stateDir, job).ok) return null;
    const dir = `${stateDir}/${jobDirName(job)}`;
    makeDir(dir, 0o700);
    const st = lstatOrNull(dir);
    return st === null ? null : { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

/** What beginJobState made goes again where no record came into it (an answer nobody took, a record that failed). */
export function dropBegun(stateDir: string, job: string, begun: Begun): void {
  const dir = `${stateDir}/${jobDirName(job)}`;
  try {
    if (notBegun(stateDir, dir, begun) === null) removeTree(dir);
  } catch {
    /* left: the TaskProlog waits 1 s for it, then reads it as missing */
  }
}

/** The gate's one call: never throws; a failure is for the log only and never changes the Prolog's exit code. */
export async function recordJobState(i: RecordInput): Promise<RecordResult> {
  const t0 = performance.now();
  try {
    const job = parseJobId(i.env.SLURM_JOB_ID);
    const uid = parseId(i.env.SLURM_JOB_UID);
    if (job === null) return { ok: false, level: i.env.SLURM_JOB_ID ? 'warn' : 'skip', why: `SLURM_JOB_ID ${JSON.stringify(i.env.SLURM_JOB_ID ?? null)} is not a job id` };
    if (uid === null) return { ok: false, level: 'warn', why: `SLURM_JOB_UID ${JSON.stringify(i.env.SLURM_JOB_UID ?? null)} is not a uid` };
    const [devInfiniband, dev, verbsOf] = await Promise.all([names(i.host, '/dev/infiniband'), names(i.host, '/dev'), readVerbsOf(i.host).then((f) => (f.state === 'present' ? f.value : null))]);
    // Which adapters are VFs of which PF, only where the adapters can be recorded at all (each takes 40 bytes or more
    // of a record the TaskProlog reads MAX_STATE_BYTES of: 2,048 VFs would be read for a record that drops them).
    const bdfs = i.inv.nics.flatMap((n) => (n.bdf.state === 'present' ? [n.bdf.value] : []));
    const physfn = verbsOf && i.inv.nics.length * 40 <= MAX_STATE_BYTES ? await readPhysfn(i.host, bdfs) : undefined;
    const state = buildPrologState({
      job,
      uid,
      node: i.node,
      inv: i.inv,
      memlockMin: i.memlockMin,
      devInfiniband,
      dev,
      verbsOf,
      ...(physfn ? { physfn } : {}),
      jobGpus: parseJobGpus(i.env.SLURM_JOB_GPUS),
      // Which PCI device each of Slurm's GPU numbers is, the way slurmd numbers them: root reads gres.conf and the minors.
      slurmGpus: await gpuOrder(i),
      now: new Date(),
    });
    // The topology file is a convenience: failing to make it leaves the job's state as it would be without it.
    let topoWhy: string | undefined;
    const topo = i.ncclTopo ? await ncclTopoFile(i.host, i.inv).catch((e: Error) => ((topoWhy = e.message), null)) : null;
    const signed = topo ? { ...state, ncclTopo: { file: topo.file.name, paths: topo.paths } } : state;
    const file = writePrologState(i.stateDir, signed, parseId(i.env.SLURM_JOB_GID), topo ? [topo.file] : [], i.handOver, i.begun ?? undefined);
    return { ok: true, file, ms: Math.round((performance.now() - t0) * 10) / 10, ...(topoWhy !== undefined ? { ncclTopoWhy: topoWhy } : {}) };
  } catch (e) {
    const job = parseJobId(i.env.SLURM_JOB_ID);
    if (i.begun && job !== null) dropBegun(i.stateDir, job, i.begun);
    return { ok: false, level: 'error', why: (e as Error).message };
  }
}
