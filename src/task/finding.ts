// A finding of the job's own view: same shape as a check's finding, its code from the task catalog.
import { type FindingOf, optionalPair, type Status } from '../model/finding.js';
import { TASK_CATALOG, type TaskCheck, type TaskCode } from './catalog.js';

/** The job's own view: the one finding shape, its source a task check, its code from the task catalog. */
export type TaskFinding = FindingOf<TaskCheck, TaskCode>;

export function tf(code: TaskCode, status: Status, subject: string, message: string, expected?: string, actual?: string): TaskFinding {
  return {
    check: TASK_CATALOG[code].check,
    code,
    status,
    subject,
    message,
    ...optionalPair(expected, actual),
  };
}
