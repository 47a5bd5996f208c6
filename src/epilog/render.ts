// Renders the epilog's bandwidth findings as text, wording from BW_CATALOG (the field matrix).
import { entry } from '../checks/catalog.js';
import type { BwFinding } from './finding.js';
import { escapeControls } from '../report/escape.js';

const TAG = { pass: 'PASS', warn: 'WARN', fail: 'FAIL', skip: 'SKIP', error: 'ERR ' } as const;

/** One line per finding; the catalog's meaning and response under each one that is not a pass or a skip. */
export function renderBw(findings: readonly BwFinding[]): string {
  const lines: string[] = [];
  for (const f of findings) {
    lines.push(`${TAG[f.status]} ${f.code} ${f.subject}: ${f.message}`);
    if (f.status === 'warn' || f.status === 'fail' || f.status === 'error') {
      const e = entry(f.code);
      lines.push(`     ${e.tells}`, `     -> ${e.response} [${e.layer}]`);
    }
  }
  return lines.map(escapeControls).join('\n');
}
