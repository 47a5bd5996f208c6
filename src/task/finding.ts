// A finding of the job's own view: same shape as a check's finding, its code from a job-view record (task/records.ts).
import { type FindingOf, optionalPair, type Status } from '../model/finding.js';
import { TASK_CHECK_OF, type TaskCheck, type TaskCode } from './records.js';

/** The job's own view: the one finding shape, its source a job-view record, its code one that record words. */
export type TaskFinding = FindingOf<TaskCheck, TaskCode>;

export function tf(code: TaskCode, status: Status, subject: string, message: string, expected?: string, actual?: string): TaskFinding {
  return {
    check: TASK_CHECK_OF[code],
    code,
    status,
    subject,
    message,
    ...optionalPair(expected, actual),
  };
}
