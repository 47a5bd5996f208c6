// `gdrgate epilog` (minimal): log for the admin what the TaskProlog saw in the job, then remove the job's
// state directory. Never fails the Epilog (a non-zero Epilog drains the node with "Epilog error").
import { hostname } from 'node:os';
import { configPath, DEFAULTS, loadConfig } from '../config.js';
import { log, setLogFile } from '../log.js';
import { UsageError } from '../runner/run.js';
import { collectJobState, type JobStateOutcome } from '../state/epilog.js';
import { parseJobId } from '../state/names.js';
import { out } from './common.js';

export interface EpilogArgs {
  readonly config?: string | undefined;
}

/** Reads, logs and removes the per-job state; the function another epilog can call as it is. */
export async function epilogJobState(stateDir: string, job: string, node: string): Promise<JobStateOutcome> {
  const logger = await log();
  const o = collectJobState(stateDir, job);
  const t = o.task;
  if (t) {
    const bad = t.state === 'untrusted' || t.findings.some((f) => f.status === 'fail' || f.status === 'error');
    logger[bad ? 'warn' : 'info']({ job, node, uid: o.ownerUid, step: t.step, state: t.state, memlock: t.memlock, findings: t.findings.filter((f) => f.status !== 'pass') }, 'gdrgate job view');
  } else if (o.taskWhy) logger.info({ job, node, uid: o.ownerUid, why: o.taskWhy }, 'gdrgate job view: none recorded');
  if (o.error) logger.error({ job, node, why: o.error }, 'per-job state not removed');
  return o;
}

export async function epilogCommand(a: EpilogArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const job = parseJobId(env.SLURM_JOB_ID);
  if (job === null) throw new UsageError('not in a Slurm Epilog (SLURM_JOB_ID unset or malformed)');
  const node = env.SLURMD_NODENAME || hostname().split('.')[0]!;
  let stateDir: string = DEFAULTS.stateDir;
  let cfgWhy: string | null = null;
  try {
    const cfg = await loadConfig(configPath(a.config));
    setLogFile(cfg.logFile);
    stateDir = cfg.stateDir;
  } catch (e) {
    cfgWhy = (e as Error).message;
  }
  if (cfgWhy) (await log()).error({ job, node, why: cfgWhy, stateDir }, 'epilog: config unreadable; cleaning the default state directory');
  const o = await epilogJobState(stateDir, job, node);
  const findings = o.task ? o.task.findings.filter((f) => f.status === 'fail' || f.status === 'error').map((f) => f.code) : [];
  out(`gdrgate epilog node=${node} job=${job} view=${o.task ? o.task.state : 'none'}${findings.length ? ` findings=${findings.join(',')}` : ''} removed=${o.removed}${o.error ? ' error' : ''}`);
  return 0;
}
