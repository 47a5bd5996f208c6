// The Epilog's bandwidth findings as text for slurmd's log: the one renderer's list (report/findings.ts), escaped.
import { listLines } from '../report/findings.js';
import { escapeControls } from '../report/escape.js';
import type { BwFinding } from './finding.js';

/** One line per finding; what it tells and what to do under each one that is not a pass or a skip. */
export function renderBw(findings: readonly BwFinding[]): string {
  return listLines(findings).map(escapeControls).join('\n');
}
