// A finding of the job's own view: same shape as a check's finding, its code from the task catalog.
import { optionalPair, type Status } from '../model/finding.js';
import { TASK_CATALOG, type TaskCheck, type TaskCode } from './catalog.js';

export interface TaskFinding {
  readonly check: TaskCheck;
  readonly code: TaskCode;
  readonly status: Status;
  readonly subject: string;
  readonly message: string;
  readonly expected?: string;
  readonly actual?: string;
}

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
