// A finding of the epilog's bandwidth judgement: the one finding shape (FindingOf), its code from BW_CATALOG.
import type { BwCode } from '../checks/catalog.js';
import type { FindingOf, Status } from '../model/finding.js';
import { STATUS_RANK } from '../model/finding.js';
import { byText } from '../model/order.js';

export interface BwFinding extends FindingOf<'bandwidth', BwCode> {
  /** Probe id and recipe hash the finding is about, when it is about one path. */
  readonly probe?: string;
  readonly recipeHash?: string;
}

export function bw(code: BwCode, status: Status, subject: string, message: string, extra: Partial<Pick<BwFinding, 'expected' | 'actual' | 'probe' | 'recipeHash'>> = {}): BwFinding {
  const clean = Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined));
  return { check: 'bandwidth', code, status, subject, message, ...clean };
}

/** Worst first, then subject: the order of the report and of the drain reason. */
export function sortBw(fs: readonly BwFinding[]): BwFinding[] {
  return [...fs].sort((a, b) => STATUS_RANK[a.status] - STATUS_RANK[b.status] || byText(a.subject, b.subject) || byText(a.code, b.code));
}
