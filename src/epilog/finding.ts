// A finding of the epilog's bandwidth judgement: the one finding shape (FindingOf), its code from its record
// (epilog/bandwidth.ts); sorted and rendered as every other finding (checks/catalog.ts, report/findings.ts).
import type { FindingOf, Status } from '../model/finding.js';
import type { BwCode } from './bandwidth.js';

export interface BwFinding extends FindingOf<'bandwidth', BwCode> {
  /** Probe id and recipe hash the finding is about, when it is about one path. */
  readonly probe?: string;
  readonly recipeHash?: string;
}

export function bw(code: BwCode, status: Status, subject: string, message: string, extra: Partial<Pick<BwFinding, 'expected' | 'actual' | 'probe' | 'recipeHash'>> = {}): BwFinding {
  const clean = Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined));
  return { check: 'bandwidth', code, status, subject, message, ...clean };
}
