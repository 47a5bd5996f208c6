// Whether the TaskProlog hands the job the node's NCCL topology file (NCCL_TOPO_FILE): only when the Prolog wrote one
// for this job (the node passed, the class asks for it), the job's /sys shows its GPUs or adapters elsewhere than the
// host does (a container's flattened or partial /sys, from which NCCL would build a wrong tree), and the job did not
// set NCCL_TOPO_FILE itself. Pure decision, plus the few reads it needs.
import type { Host } from '../host/host.js';
import { jobDirName, parseJobId } from '../state/names.js';
import type { PrologState } from '../state/types.js';
import { tf, type TaskFinding } from './finding.js';
import type { PlacementView } from './placement.js';

/** How the job sees one device the host's file names. */
export type DeviceView = { readonly kind: 'same' } | { readonly kind: 'moved'; readonly path: string } | { readonly kind: 'missing' } | { readonly kind: 'unknown'; readonly why: string };

export interface NcclTopoInput {
  /** The Prolog's record, trusted; null when there is none to trust. */
  readonly state: PrologState | null;
  /** The file's path in the job's view (stateDir/job-<id>/nccl-topo.xml). */
  readonly path: string;
  /** Bus ids of the task's GPUs (Slurm's numbers through the Prolog's order, task/placement.ts); null: not known, every GPU counts. */
  readonly jobGpus: readonly string[] | null;
  readonly views: ReadonlyMap<string, DeviceView>;
  /** Whether the job can read the file at `path` (its mount namespace may not have the state directory). */
  readonly readable: boolean;
  /** NCCL_TOPO_FILE as the job's environment has it. */
  readonly env: string | undefined;
}

export interface NcclTopoDecision {
  /** The value to export; null: export nothing. */
  readonly export: string | null;
  readonly finding: TaskFinding | null;
  /** The TaskProlog `print` text saying why (null when there is nothing to tell). */
  readonly why: string | null;
}

const NONE: NcclTopoDecision = { export: null, finding: null, why: null };
/** A value Slurm's TaskProlog parser takes whole: one line, no blank (it splits `export NAME=value` at the line end). */
const SAFE_PATH = /^\/[\x21-\x7e]{1,4000}$/;

/** The devices whose view decides: the job's GPUs and every adapter in the file. */
export function devicesToCompare(state: PrologState, jobGpus: readonly string[] | null): string[] {
  const paths = state.ncclTopo?.paths ?? {};
  const gpus = new Set(state.gpus);
  return Object.keys(paths).filter((bdf) => !gpus.has(bdf) || jobGpus === null || jobGpus.includes(bdf)).sort();
}

/**
 * Whether NCCL_TOPO_FILE's value is gdrgate's own file, for this job (`path`) or any other one: the same state
 * directory and file name, under a job's directory (`stateDir/job-<id>/nccl-topo.xml`).
 */
export function isOwnValue(env: string, path: string): boolean {
  if (env === path) return true;
  const cut = (p: string): [string, string, string] | null => {
    const m = /^(.*)\/(job-[^/]+)\/([^/]+)$/.exec(p);
    return m ? [m[1]!, m[2]!, m[3]!] : null;
  };
  const [e, p] = [cut(env), cut(path)];
  return e !== null && p !== null && e[0] === p[0] && e[2] === p[2] && parseJobId(e[1].slice('job-'.length)) !== null;
}

export function decideNcclTopo(i: NcclTopoInput): NcclTopoDecision {
  const s = i.state;
  if (!s?.ncclTopo) return NONE;
  const moved: string[] = [];
  const hidden: string[] = [];
  let example = '';
  for (const bdf of devicesToCompare(s, i.jobGpus)) {
    const v = i.views.get(bdf);
    if (v?.kind === 'moved') {
      moved.push(bdf);
      example ||= `; ${bdf} is at ${v.path}, on the host at ${s.ncclTopo.paths[bdf]}`;
    } else if (v?.kind === 'missing') hidden.push(bdf);
  }
  const n = moved.length + hidden.length;
  // Nothing seen differently, or nothing that could be told apart: NCCL's own detection stands.
  if (n === 0) return NONE;
  const parts = [...(moved.length ? [`elsewhere: ${moved.join(', ')}`] : []), ...(hidden.length ? [`hidden: ${hidden.join(', ')}`] : [])];
  const what = `this job's /sys shows ${n === 1 ? 'a device' : `${n} devices`} of its GPU/RDMA path unlike the host (${parts.join('; ')}${example})`;
  // A later step inherits the earlier step's export, and a job submitted from another job's task (sbatch inherits the
  // environment) that job's: gdrgate's own value for any job is not the job's choice.
  if (i.env !== undefined && !isOwnValue(i.env, i.path)) {
    return { export: null, finding: tf('job-nccl-topo-kept', 'pass', 'NCCL_TOPO_FILE', `${what}; NCCL_TOPO_FILE is left as the job set it (${i.env})`), why: `gdrgate: ${what}; NCCL_TOPO_FILE left as the job set it` };
  }
  if (!i.readable || !SAFE_PATH.test(i.path)) {
    return { export: null, finding: tf('job-nccl-topo-unreachable', 'warn', 'NCCL_TOPO_FILE', `${what}, but the host's topology file ${i.path} cannot be read from this job`), why: null };
  }
  return { export: i.path, finding: tf('job-nccl-topo-set', 'pass', 'NCCL_TOPO_FILE', `${what}; NCCL_TOPO_FILE set to the host's topology`, undefined, i.path), why: `gdrgate: ${what}: NCCL_TOPO_FILE set to the host's topology (${i.path}) so that NCCL sees the node's real GPU-NIC paths` };
}

/** The job's view of each device: where /sys/bus/pci/devices/<bdf> leads in the job's mount namespace. */
export async function readDeviceViews(host: Host, state: PrologState, jobGpus: readonly string[] | null): Promise<Map<string, DeviceView>> {
  const out = new Map<string, DeviceView>();
  await Promise.all(devicesToCompare(state, jobGpus).map(async (bdf) => {
    const r = await host.realPath(`/sys/bus/pci/devices/${bdf}`);
    const want = state.ncclTopo?.paths[bdf];
    out.set(bdf, r.ok ? (r.value === want ? { kind: 'same' } : { kind: 'moved', path: r.value }) : r.missing ? { kind: 'missing' } : { kind: 'unknown', why: r.reason });
  }));
  return out;
}

/**
 * The TaskProlog protocol lines for the decision: the reason (from the step's one voice, `speak`), then the export,
 * which every task needs: each task's environment is its own.
 */
export function ncclTopoLines(d: NcclTopoDecision, oneLine: (s: string) => string, speak: boolean): string[] {
  return [...(d.why && speak ? [`print ${oneLine(d.why)}`] : []), ...(d.export ? [`export NCCL_TOPO_FILE=${d.export}`] : [])];
}

/** Bus ids of the GPUs the placement judges; null when not known (no GPU asked for, or Slurm's numbers not mapped). */
export function judgedBdfs(p: PlacementView): string[] | null {
  if (!p.sel || !p.order.ok) return null;
  const order = p.order.gpus;
  const out = p.sel.ids.flatMap((id) => (order[id] ? [order[id].bdf] : []));
  return out.length ? out : null;
}

/** Everything the TaskProlog needs for the decision, read in the job's view (only when the Prolog wrote a file). */
export async function ncclTopoForJob(i: {
  readonly host: Host;
  readonly stateDir: string;
  readonly job: string;
  readonly state: PrologState | null;
  /** Bus ids of the GPUs judged (task/placement.ts); null: not known, every GPU counts. */
  readonly gpus: readonly string[] | null;
  readonly env: string | undefined;
  /** Whether the job's user can read the file whole. */
  readonly readable: (path: string) => boolean;
}): Promise<NcclTopoDecision> {
  const s = i.state;
  if (!s?.ncclTopo) return NONE;
  const path = `${i.stateDir}/${jobDirName(i.job)}/${s.ncclTopo.file}`;
  const jobGpus = i.gpus;
  const views = await readDeviceViews(i.host, s, jobGpus && jobGpus.length ? jobGpus : null);
  const readable = i.readable(path);
  return decideNcclTopo({ state: s, path, jobGpus: jobGpus && jobGpus.length ? jobGpus : null, views, readable, env: i.env });
}
