// `gdrgate task`: Slurm's TaskProlog (the job's own view of memlock and devices, against the Prolog's signed
// record for this job), or with --standalone a report for a person inside a container.
import { hostname } from 'node:os';
import { loadBaselineFor } from '../baseline/load.js';
import { configPath, DEFAULTS, loadConfig, type Config } from '../config.js';
import { formatBytes } from '../parsers/limits.js';
import { UsageError } from '../errors.js';
import { parseJobId, TASK_FORMAT } from '../state/names.js';
import { readPrologState, writeTaskRecord, type StateRead } from '../state/read.js';
import type { Bytes, TaskRecord } from '../state/types.js';
import { accessProbe } from '../task/access.js';
import type { TaskFinding } from '../task/finding.js';
import { judge, resolveMin } from '../task/judge.js';
import { jobMemlock } from '../task/memlock.js';
import { renderStandalone, taskPrologLines } from '../task/render.js';
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

/** The class minimum from the baseline, when this user can read it and a class matches. */
async function baselineMin(cfg: Config | null, node: string): Promise<Bytes | null> {
  if (!cfg) return null;
  return loadBaselineFor(cfg.baseline, node).then((b) => b.cls.memlockMin, () => null);
}

function record(job: string, env: NodeJS.ProcessEnv, node: string, view: JobView, state: StateRead, findings: readonly TaskFinding[]): TaskRecord {
  const jm = view.self.known ? jobMemlock(view.self.value, env.SLURM_RLIMIT_MEMLOCK) : null;
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

async function standalone(a: TaskArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const cfg = await tryConfig(a.config);
  const root = a.root ?? cfg?.root ?? '/';
  const host = await openHost(root);
  const node = env.SLURMD_NODENAME || hostname().split('.')[0]!;
  const [view, bmin] = await Promise.all([readJobView(host, accessProbe(host)), baselineMin(cfg, node)]);
  const min = resolveMin(null, bmin);
  const findings = judge({ view, rlimitMemlock: env.SLURM_RLIMIT_MEMLOCK, state: null, min });
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
  const hasMin = state.status === 'trusted' && state.state.memlockMin !== null;
  const min = resolveMin(state, hasMin ? null : await baselineMin(cfg, node));
  const findings = judge({ view, rlimitMemlock: env.SLURM_RLIMIT_MEMLOCK, state, min });
  // Every task of a step runs the TaskProlog: one voice per node and step is enough.
  if (env.SLURM_LOCALID === undefined || env.SLURM_LOCALID === '0') {
    const lines = taskPrologLines(findings);
    if (lines.length) out(lines.join('\n'));
    const w = writeTaskRecord(stateDir, record(job, env, node, view, state, findings));
    if (!w.ok && state.status !== 'missing') process.stderr.write(`gdrgate task: task record not written: ${w.why}\n`);
  }
  return exitCode(taskResult(findings, 'taskprolog', a.fail));
}

export async function taskCommand(a: TaskArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return a.standalone ? standalone(a, env) : taskProlog(a, env);
}
