// The job's own view (gdrgate task) as records, with what each finding means for the job and what its user (or the
// admin) can do, worded in records.json. An id names one area of the node: memlock-limit and job-placement are judged
// on the node by their check (src/checks/) and inside the job here; each source words its own codes, and no code
// belongs to two records.
import { defineRecord } from '../checks/types.js';
import { worded } from '../checks/wording.js';
import WORDING from './records.json' with { type: 'json' };

type Records = typeof WORDING.records;
/** A job-view record: its id, and its codes from the wording file, checked once as this module loads. */
const job = <const Id extends keyof Records>(id: Id) => defineRecord({ id, source: 'job', codes: worded<Records[Id]['codes']>('src/task/records.json', WORDING.records[id].codes) });

/** The job view's records, in the order its findings are judged. */
export const JOB_VIEW = [
  // The job's own locked-memory limit: memlock-limit judged from inside the job (the node check judges slurmd's and the gate's).
  job('memlock-limit'),
  // The RDMA and GPU devices the job sees, and the NCCL topology file it is handed.
  job('job-visibility'),
  // The job's CPUs, memory and adapters against its GPUs: job-placement judged from inside the job (the node check judges gres.conf).
  job('job-placement'),
  // The host's signed record for this job, which the job view is compared with.
  job('job-state'),
] as const;

export type TaskCheck = (typeof JOB_VIEW)[number]['id'];
type CodesOf<T> = T extends { readonly codes: infer C } ? keyof C & string : never;
export type TaskCode = CodesOf<(typeof JOB_VIEW)[number]>;

/** The record each job-view code belongs to. */
export const TASK_CHECK_OF: Readonly<Record<TaskCode, TaskCheck>> = Object.fromEntries(JOB_VIEW.flatMap((r) => Object.keys(r.codes).map((c) => [c, r.id]))) as Record<TaskCode, TaskCheck>;

/** Whether a string read back from a task record is a job-view code (state/epilog.ts, epilog/task-counts.ts). */
export function isTaskCode(code: unknown): code is TaskCode {
  return typeof code === 'string' && Object.hasOwn(TASK_CHECK_OF, code);
}
