// A check is a small typed object: an id, a title, and a pure function from inventory (+ baseline) to findings.
import type { BaselineClass } from '../model/baseline.js';
import { optionalPair, type CheckId, type Finding, type Status } from '../model/finding.js';
import type { Inventory } from '../model/inventory.js';
import type { Code } from './catalog.js';

export interface CheckContext {
  readonly inv: Inventory;
  /** The node's class in the baseline; null when run without one (universal rules only). */
  readonly baseline: BaselineClass | null;
}

export interface Check {
  readonly id: CheckId;
  readonly title: string;
  run(ctx: CheckContext): Finding[];
}

export function defineCheck(c: Check): Check {
  return c;
}

/** Builds findings for one check so every call site stays one line. */
export function finder(check: CheckId) {
  return (code: Code, status: Status, subject: string, message: string, expected?: string, actual?: string): Finding => ({
    check,
    code,
    status,
    subject,
    message,
    ...optionalPair(expected, actual),
  });
}
