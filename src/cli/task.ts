// `gdrgate task`: Slurm's TaskProlog (the job's own view of memlock and devices, against the Prolog's signed
// record for this job), or with --standalone a report for a person inside a container.
import { hostname } from 'node:os';
import { loadBaselineFor } from '../baseline/load.js';
import { configPath, DEFAULTS, loadConfig, type Config } from '../config.js';
import { formatBytes } from '../parsers/limits.js';
import { UsageError } from '../errors.js';
import { jobDirName, parseJobId, TASK_FILE, TASK_FORMAT } from '../state/names.js';
import { summarizeTaskRecord } from '../state/epilog.js';
import { readSmall } from '../host/files.js';
import { readPrologState, writeTaskRecord, type StateRead } from '../state/read.js';
import type { TaskRecord } from '../state/types.js';
import type { BaselineClass } from '../model/baseline.js';
import type { Host } from '../host/host.js';
import { parseJobGpus } from '../state/prolog.js';
import { readPlacement } from '../task/placement.js';
import { accessProbe } from '../task/access.js';
import type { TaskFinding } from '../task/finding.js';
import { judge, resolveMin, type JudgeInput } from '../task/judge.js';
import { jobMemlock } from '../task/memlock.js';
import { oneLine, renderStandalone, taskPrologLines } from '../task/render.js';
import { ncclTopoForJob, ncclTopoLines } from '../task/nccl-topo.js';
import { exitCode, taskResult } from '../runner/exit.js';
import { readJobView, type JobView } from '../task/view.js';
import { openHost } from '../host/open.js';
import { out } from './common.js';

export interface TaskArgs {
  readonly standalone: boolean;
  readonly root?: string | undefined;
  readonly config?: string | undefined;
  readonly fail: boolean;
}

/** The config if it can be read; a job's user or a container may have none (defaults then apply). */
async function tryConfig(flag: string | undefined): Promise<Config | null> {
  return loadConfig(configPath(flag)).catch(() => null);
}

/** The node's class in the baseline, when this user can read it and a class matches. */
async function baselineClass(cfg: Config | null, node: string): Promise<BaselineClass | null> {
  if (!cfg) return null;
  return loadBaselineFor(cfg.baseline, node).then((b) => b.cls, () => null);
}

/** Where the job landed: its GPUs from the signed record when trusted (else the environment), and the class's matrix. */
async function placementOf(host: Host, env: NodeJS.ProcessEnv, state: StateRead | null, cls: BaselineClass | null): Promise<NonNullable<JudgeInput['placement']>> {
  const jobGpus = state?.status === 'trusted' ? state.state.jobGpus : parseJobGpus(env.SLURM_JOB_GPUS);
  return { place: await readPlacement(host, jobGpus), jobGpus, paths: cls?.paths ?? null };
}

function record(job: string, env: NodeJS.ProcessEnv, node: string, view: JobView, state: StateRead, findings: readonly TaskFinding[]): TaskRecord {
  const jm = view.self.state === 'present' ? jobMemlock(view.self.value, env.SLURM_RLIMIT_MEMLOCK) : null;
  return {
    format: TASK_FORMAT,
    job,
    step: env.SLURM_STEP_ID ?? 'batch',
    uid: process.getuid?.() ?? -1,
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
function withEarlierSteps(stateDir: string, rec: TaskRecord): TaskRecord {
  const r = readSmall(`${stateDir}/${jobDirName(rec.job)}/${TASK_FILE}`, { max: 64 * 1024, owner: rec.uid });
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

async function standalone(a: TaskArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const cfg = await tryConfig(a.config);
  const root = a.root ?? cfg?.root ?? '/';
  const host = await openHost(root);
  const node = env.SLURMD_NODENAME || hostname().split('.')[0]!;
  const [view, cls] = await Promise.all([readJobView(host, accessProbe(host)), baselineClass(cfg, node)]);
  const min = resolveMin(null, cls?.memlockMin ?? null);
  const placement = await placementOf(host, env, null, cls);
  const findings = judge({ view, rlimitMemlock: env.SLURM_RLIMIT_MEMLOCK, state: null, min, placement });
  const code = exitCode(taskResult(findings, 'standalone', true));
  out(renderStandalone(findings, { root, host: node, min: { value: formatBytes(min.value), from: min.from } }, code));
  return code;
}

async function taskProlog(a: TaskArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const job = parseJobId(env.SLURM_JOB_ID);
  if (job === null) throw new UsageError('not inside a Slurm job (SLURM_JOB_ID unset or malformed); run it by hand with --standalone');
  const uid = process.getuid?.() ?? -1;
  const node = env.SLURMD_NODENAME || hostname().split('.')[0]!;
  const cfg = await tryConfig(a.config);
  const stateDir = cfg?.stateDir ?? DEFAULTS.stateDir;
  const host = await openHost(a.root ?? cfg?.root ?? '/');
  const [view, state] = await Promise.all([readJobView(host, accessProbe(host)), Promise.resolve(readPrologState(stateDir, { job, uid, node }))]);
  const cls = await baselineClass(cfg, node);
  const min = resolveMin(state, cls?.memlockMin ?? null);
  const placement = await placementOf(host, env, state, cls);
  // The host's NCCL topology for this job, when the Prolog wrote one and this job's /sys would mislead NCCL.
  const minors = placement.place.minors.state === 'present' ? placement.place.minors.value : null;
  const topo = await ncclTopoForJob({ host, stateDir, job, state: state.status === 'trusted' ? state.state : null, minors, env: env.NCCL_TOPO_FILE });
  const findings = [...judge({ view, rlimitMemlock: env.SLURM_RLIMIT_MEMLOCK, state, min, placement }), ...(topo.finding ? [topo.finding] : [])];
  // Every task of a step runs the TaskProlog: one voice per node and step is enough (the export goes to every task).
  const voice = env.SLURM_LOCALID === undefined || env.SLURM_LOCALID === '0';
  if (!voice && topo.export) out(ncclTopoLines(topo, oneLine, false).join('\n'));
  if (voice) {
    const lines = [...taskPrologLines(findings), ...ncclTopoLines(topo, oneLine, true)];
    if (lines.length) out(lines.join('\n'));
    const w = writeTaskRecord(stateDir, withEarlierSteps(stateDir, record(job, env, node, view, state, findings)));
    if (!w.ok && state.status !== 'missing') process.stderr.write(`gdrgate task: task record not written: ${w.why}\n`);
  }
  return exitCode(taskResult(findings, 'taskprolog', a.fail));
}

export async function taskCommand(a: TaskArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return a.standalone ? standalone(a, env) : taskProlog(a, env);
}
