// gdrgate task as a hook (engine/hook.ts runs its life cycle): as Slurm's TaskProlog, the job's own view of memlock,
// devices and placement against the Prolog's signed record for this job, its protocol lines, and the task record the
// Epilog reads; with --standalone, a report for a person inside a container. Never drains: it runs as the job's user.
import { loadBaselineFor } from '../baseline/load.js';
import { DEFAULTS, type Config } from '../config.js';
import type { ActingHook, HookRun, Judgement } from '../engine/hook.js';
import { readSmall } from '../host/files.js';
import type { HeldDir } from '../host/held-dir.js';
import type { Host } from '../host/host.js';
import { openHost } from '../host/open.js';
import { readAdapterFunctions } from '../inventory/placement.js';
import type { BaselineClass } from '../model/baseline.js';
import { formatBytes } from '../parsers/limits.js';
import { taskResult } from '../runner/exit.js';
import type { Outcome } from '../runner/policy.js';
import { summarizeTaskRecord } from '../state/epilog.js';
import { jobDirName, TASK_FILE, TASK_FORMAT } from '../state/names.js';
import { parseJobGpus } from '../state/prolog.js';
import { readPrologState, writeTaskRecord, type StateRead } from '../state/read.js';
import type { TaskRecord } from '../state/types.js';
import { accessProbe } from './access.js';
import type { TaskFinding } from './finding.js';
import { judge, resolveMin, type JudgeInput } from './judge.js';
import { jobMemlock } from './memlock.js';
import { judgedBdfs, ncclTopoForJob, ncclTopoLines } from './nccl-topo.js';
import { normalStep, parseStepGpus, readPlacement, selectGpus } from './placement.js';
import { oneLine, renderStandalone, taskPrologLines } from './render.js';
import { readJobView, type JobView } from './view.js';

/**
 * Where the job's view comes from: this process (as the job's user, `gdrgate task`), or the facts the TaskProlog
 * read with bash alone, judged by the agent (agent/task.ts, task/facts.ts). Everything `gdrgate task` reads as the
 * job's user goes through it.
 */
export interface TaskView {
  readonly host: Host;
  /** The job's user. */
  readonly uid: number;
  /** Whether the job's user can read `path` whole (the host's NCCL topology file). */
  readable(path: string): boolean;
  /** The node's class in the baseline, as the job's user can read it. */
  baseline(cfg: Config | null, node: string): Promise<BaselineClass | null>;
  /** Where the task record goes (default: written into the job's directory as this user). */
  keep?(stateDir: string, rec: TaskRecord): { ok: true } | { ok: false; why: string };
  /** The job's directory as root holds it (the agent: never entering a mount in it); else looked up by name. */
  readonly jobDir?: HeldDir;
}

/** The job's view as this process sees it. */
export async function ownView(root: string): Promise<TaskView> {
  return { host: await openHost(root), uid: process.getuid?.() ?? -1, readable: (p) => readSmall(p, { max: 4 * 1024 * 1024 }).ok, baseline: baselineClass };
}

export interface TaskArgs {
  readonly standalone: boolean;
  readonly root?: string | undefined;
  readonly config?: string | undefined;
  readonly fail: boolean;
}

/** The node's class in the baseline, when this user can read it and a class matches. */
export async function baselineClass(cfg: Config | null, node: string): Promise<BaselineClass | null> {
  if (!cfg) return null;
  return loadBaselineFor(cfg.baseline, node).then((b) => b.cls, () => null);
}

/**
 * Where the task landed: its GPUs (the step's when they are the job's; the job's from the signed record when trusted,
 * else the environment), which PCI devices Slurm's numbers are (the record's order), and the class's matrix.
 */
async function placementOf(host: Host, env: NodeJS.ProcessEnv, state: StateRead | null, cls: BaselineClass | null, hcas: JobView['hcas']): Promise<NonNullable<JudgeInput['placement']>> {
  const rec = state?.status === 'trusted' ? state.state : null;
  const job = rec ? rec.jobGpus : parseJobGpus(env.SLURM_JOB_GPUS);
  const step = parseStepGpus(env);
  const sel = selectGpus(job, step, rec !== null, normalStep(env.SLURM_STEP_ID));
  const noRecord = rec ? "the Prolog's record (an older gdrgate's) does not say how Slurm numbers this node's GPUs" : "no trusted Prolog record says how Slurm numbers this node's GPUs";
  // Under MIG, slurmd's AutoDetect numbers MIG instances, and CUDA_VISIBLE_DEVICES names them (MIG-<uuid>): Slurm's
  // numbers are not GPUs, so no order of GPUs maps them (the Prolog's counts GPUs: judged by it, GPU 1 was a slice of 0).
  const mig = /(^|,)MIG-/.test(env.CUDA_VISIBLE_DEVICES ?? '');
  const order = mig ? { ok: false as const, why: 'CUDA_VISIBLE_DEVICES names MIG instances: Slurm numbers the MIG instances here, not the GPUs' } : (rec?.slurmGpus ?? null);
  const refNics = cls ? new Map(cls.devices.flatMap((d) => (d.role === 'nic' && d.name !== undefined ? [[d.name, d.bdf] as const] : []))) : null;
  // Without root's record of this node's adapters, the PCI function of each one the job sees, as its own /sys shows it.
  const [place, functions] = await Promise.all([readPlacement(host, sel, order, noRecord, [...(job ?? []), ...(step ?? [])]), !rec && refNics?.size && hcas.state === 'present' ? readAdapterFunctions(host, hcas.value) : null]);
  return { place, paths: cls?.paths ?? null, refNics, functions };
}

function taskRecord(job: string, uid: number, env: NodeJS.ProcessEnv, node: string, view: JobView, state: StateRead, findings: readonly TaskFinding[]): TaskRecord {
  const jm = view.self.state === 'present' ? jobMemlock(view.self.value, env.SLURM_RLIMIT_MEMLOCK) : null;
  return {
    format: TASK_FORMAT,
    job,
    step: env.SLURM_STEP_ID ?? 'batch',
    uid,
    node,
    time: new Date().toISOString(),
    state: state.status,
    memlock: jm?.ok ? { soft: jm.value.soft, hard: jm.value.hard, source: jm.value.source } : null,
    findings: findings.map((f) => ({ code: f.code, status: f.status, subject: f.subject, message: f.message })),
  };
}

/**
 * Every step's TaskProlog writes task.json, and steps differ (each srun binds its own CPUs): an earlier step's
 * findings that this step does not repeat are kept, so the Epilog counts what every step of the job met.
 */
function withEarlierSteps(stateDir: string, rec: TaskRecord, held?: HeldDir): TaskRecord {
  const rules = { max: 64 * 1024, owner: rec.uid };
  const r = held ? held.read(TASK_FILE, rules) : readSmall(`${stateDir}/${jobDirName(rec.job)}/${TASK_FILE}`, rules);
  if (!r.ok) return rec;
  let raw: unknown;
  try {
    raw = JSON.parse(r.value.toString('utf8'));
  } catch {
    return rec;
  }
  const old = summarizeTaskRecord(raw, rec.job);
  if (typeof old === 'string') return rec;
  const key = (f: { code: string; subject: string }): string => `${f.code}\0${f.subject}`;
  const have = new Set(rec.findings.map(key));
  const kept = old.findings.filter((f) => f.status !== 'pass' && !have.has(key(f)));
  return { ...rec, findings: [...rec.findings, ...kept].slice(0, 32) };
}

/** The verdict exitCode() reads (runner/exit.ts taskResult), as an outcome: its findings, the ones that made it. */
function outcomeOf(findings: readonly TaskFinding[], mode: 'taskprolog' | 'standalone', fail: boolean): Outcome {
  if (taskResult(findings, mode, fail) === 'ok') return { kind: 'healthy' };
  return { kind: 'unhealthy', failing: findings.filter((f) => f.status === 'fail' || (mode === 'standalone' && f.status === 'warn')) };
}

type Work = {
  readonly view: JobView;
  readonly state: StateRead;
  readonly lines: readonly string[];
  readonly voice: boolean;
  readonly uid: number;
  readonly keep: NonNullable<TaskView['keep']>;
};

async function judgeTaskProlog(run: HookRun, a: TaskArgs, job: string, from: TaskView | null): Promise<Judgement<Work, TaskFinding>> {
  const { env, cfg, node } = run;
  const tv = from ?? (await ownView(a.root ?? cfg?.root ?? '/'));
  const { host, uid } = tv;
  const stateDir = cfg?.stateDir ?? DEFAULTS.stateDir;
  const [view, state] = await Promise.all([readJobView(host, accessProbe(host)), Promise.resolve(readPrologState(stateDir, { job, uid, node }, tv.jobDir))]);
  const cls = await tv.baseline(cfg, node);
  const min = resolveMin(state, cls?.memlockMin ?? null);
  const placement = await placementOf(host, env, state, cls, view.hcas);
  // The host's NCCL topology for this job, when the Prolog wrote one and this job's /sys would mislead NCCL.
  const topo = await ncclTopoForJob({ host, stateDir, job, state: state.status === 'trusted' ? state.state : null, gpus: judgedBdfs(placement.place), env: env.NCCL_TOPO_FILE, readable: (p) => tv.readable(p) });
  const findings = [...judge({ view, rlimitMemlock: env.SLURM_RLIMIT_MEMLOCK, state, min, placement }), ...(topo.finding ? [topo.finding] : [])];
  // Every task of a step runs the TaskProlog: one voice per node and step is enough (the export goes to every task).
  const voice = env.SLURM_LOCALID === undefined || env.SLURM_LOCALID === '0';
  const lines = voice ? [...taskPrologLines(findings), ...ncclTopoLines(topo, oneLine, true)] : topo.export ? ncclTopoLines(topo, oneLine, false) : [];
  return { outcome: outcomeOf(findings, 'taskprolog', a.fail), findings, work: { view, state, lines, voice, uid, keep: tv.keep ?? writeTaskRecord } };
}

/** The TaskProlog: its protocol lines (`print`, `export`) are its report; the task record is what it keeps. */
export function taskPrologHook(a: TaskArgs, env: NodeJS.ProcessEnv, job: string, from: TaskView | null = null): ActingHook<Work, TaskFinding> {
  return {
    mode: 'task',
    env,
    config: a.config,
    job,
    judge: (run) => judgeTaskProlog(run, a, job, from),
    record: async (run, j) => {
      if (!j.work?.voice) return;
      const stateDir = run.cfg?.stateDir ?? DEFAULTS.stateDir;
      const { view, state, uid, keep } = j.work;
      const w = keep(stateDir, withEarlierSteps(stateDir, taskRecord(job, uid, env, run.node, view, state, j.findings), from?.jobDir));
      if (!w.ok && state.status !== 'missing') process.stderr.write(`gdrgate task: task record not written: ${w.why}\n`);
    },
    render: (_run, j) => (j.work?.lines.length ? [j.work.lines.join('\n')] : []),
  };
}

/** `gdrgate task --standalone`: the job's view judged on its own, for a person (the layout of `gdrgate check`). */
export function standaloneHook(a: TaskArgs, env: NodeJS.ProcessEnv): ActingHook<{ readonly root: string; readonly min: { readonly value: string; readonly from: string } }, TaskFinding> {
  return {
    mode: 'task',
    env,
    config: a.config,
    judge: async (run) => {
      const root = a.root ?? run.cfg?.root ?? '/';
      const host = await openHost(root);
      const [view, cls] = await Promise.all([readJobView(host, accessProbe(host)), baselineClass(run.cfg, run.node)]);
      const min = resolveMin(null, cls?.memlockMin ?? null);
      const placement = await placementOf(host, env, null, cls, view.hcas);
      const findings = judge({ view, rlimitMemlock: env.SLURM_RLIMIT_MEMLOCK, state: null, min, placement });
      return { outcome: outcomeOf(findings, 'standalone', true), findings, work: { root, min: { value: formatBytes(min.value), from: min.from } } };
    },
    render: (run, j, d) => (j.work ? [renderStandalone(j.findings, { root: j.work.root, host: run.node, min: j.work.min }, d.exitCode)] : []),
  };
}
