// The drain reason we own: `gdrgate: <check> <subject> <actual> (want <expected>)[; +N more] job=<id>`, <= 255 bytes.
import type { CheckId, Finding } from '../model/finding.js';

export const PREFIX = 'gdrgate:';
export const MAX_REASON_BYTES = 255;

/** Short names so that the first 20 characters (what `sinfo -R` shows) already name the failing check. */
const LABEL: Readonly<Record<CheckId | 'config' | 'internal', string>> = {
  'device-inventory': 'inventory',
  'pcie-link': 'pcie-link',
  'pcie-acs': 'pcie-acs',
  'pcie-ats': 'pcie-ats',
  'iommu-mode': 'iommu-mode',
  'gpudirect-mechanism': 'gpudirect',
  'memlock-limit': 'memlock',
  'topology-distance': 'topology',
  config: 'config',
  internal: 'internal',
};

/** Device strings, host names and job ids reach a reason only through here: printable ASCII, no quotes. */
export function sanitize(s: string): string {
  return s
    .replace(/[^\x20-\x7e]/g, ' ')
    .replace(/["'`\\$]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function cut(s: string, maxBytes: number): string {
  return s.length <= maxBytes ? s : s.slice(0, Math.max(0, maxBytes - 3)) + '...';
}

export function buildReason(failing: readonly Finding[], job: string | undefined): string {
  const first = failing[0];
  const tail = `${failing.length > 1 ? `; +${failing.length - 1} more` : ''}${job ? ` job=${sanitize(job).replace(/ /g, '')}` : ''}`;
  let body: string;
  if (!first) body = `${PREFIX} unknown`;
  else {
    const label = LABEL[first.check] ?? 'check';
    const actual = first.actual ?? first.message;
    const want = first.expected !== undefined ? ` (want ${first.expected})` : '';
    body = sanitize(`${PREFIX} ${label} ${first.subject} ${actual}${want}`);
  }
  // ASCII only after sanitize, so length is bytes.
  return cut(body, MAX_REASON_BYTES - tail.length) + tail;
}

export function isOurs(reason: string | null): boolean {
  return reason !== null && reason.startsWith(PREFIX);
}
