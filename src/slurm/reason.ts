// The drain reason we own: `gdrgate: <check> <subject> <actual> (want <expected>)[; +N more] job=<id>`, <= 255 bytes.
import { REASON_LABELS } from '../checks/index.js';
import type { AnyFinding } from '../model/finding.js';

export const PREFIX = 'gdrgate:';
export const MAX_REASON_BYTES = 255;

/** Short names so that the first 20 characters (what `sinfo -R` shows) already name the failing check (each check's record). */
const LABEL = REASON_LABELS;

/** Device strings, host names and job ids reach a reason only through here: printable ASCII, no quotes. */
export function sanitize(s: string): string {
  return s
    .replace(/[^\x20-\x7e]/g, ' ')
    .replace(/["'`\\$]/g, '')
    .replace(/\[/g, '(')
    .replace(/\]/g, ')') // slurmctld appends " [user@time]": a bracket of ours would end the reason read back early
    .replace(/\s+/g, ' ')
    .trim();
}

/** Longest job id kept (Slurm's are digits; array jobs `<id>_<task>`): a tail never crowds out the prefix. */
export const MAX_JOB_CHARS = 24;
/** Longest label kept: `sinfo -R` shows 20 characters, and a label is one word. */
export const MAX_LABEL_CHARS = 32;

/** `s` (ASCII after sanitize, so characters are bytes) in at most `max` bytes, `...` marking a cut. */
function cut(s: string, max: number): string {
  return s.length <= max ? s : s.slice(0, Math.max(0, max - 3)) + '...';
}

/** One word of printable ASCII, at most `max` characters; `fallback` when nothing is left. */
function word(s: string, max: number, fallback: string): string {
  const w = sanitize(s).replace(/ /g, '');
  return w === '' ? fallback : cut(w, max);
}

/** What a reason says about its first finding; checks and the epilog's bandwidth judgement both fill it. */
export interface ReasonHead {
  /** Short name, first after the prefix: `pcie-link`, `bw-gpu-path`. */
  readonly label: string;
  readonly subject: string;
  readonly actual: string;
  readonly expected?: string | undefined;
}

/** `gdrgate: <label> <subject> <actual> (want <expected>)[; +N more] job=<id>`, at most 255 bytes, suffix kept. */
export function formatReason(head: ReasonHead | null, count: number, job: string | undefined): string {
  const more = Number.isSafeInteger(count) && count > 1 ? `; +${count - 1} more` : '';
  const id = job === undefined ? '' : word(job, MAX_JOB_CHARS, '');
  // Bounded (<= 16 + 29 bytes), so the body below always keeps the prefix and the label.
  const tail = `${more}${id ? ` job=${id}` : ''}`;
  const want = head?.expected !== undefined ? ` (want ${sanitize(head.expected)})` : '';
  const body = head === null ? `${PREFIX} unknown` : `${PREFIX} ${word(head.label, MAX_LABEL_CHARS, 'check')} ${sanitize(`${head.subject} ${head.actual}${want}`)}`;
  return cut(body.trimEnd(), MAX_REASON_BYTES - tail.length) + tail;
}

/** A check's findings are labelled by its record's reasonLabel; the epilog's bandwidth findings by their code. */
export function labelOf(f: AnyFinding): string {
  return f.check === 'bandwidth' ? f.code : ((LABEL as Readonly<Record<string, string>>)[f.check] ?? 'check');
}

export function buildReason(failing: readonly AnyFinding[], job: string | undefined): string {
  const first = failing[0];
  const head = first ? { label: labelOf(first), subject: first.subject, actual: first.actual ?? first.message, expected: first.expected } : null;
  return formatReason(head, failing.length, job);
}

/** The reason for the Epilog's failing bandwidth findings (labelled by their code: `gdrgate: bw-gpu-path`); buildReason's. */
export function bandwidthReason(failing: readonly Omit<AnyFinding, 'check' | 'status'>[], job: string | undefined): string {
  return buildReason(failing.map((f) => ({ ...f, check: 'bandwidth', status: 'fail' })), job);
}

export function isOurs(reason: string | null): boolean {
  return reason !== null && reason.startsWith(PREFIX);
}

/** The label of a reason of ours, the word after the prefix (`pcie-link`, `bw-gpu-path`, `drill`); null if not ours. */
export function reasonLabel(reason: string | null): string | null {
  if (reason === null || !isOurs(reason)) return null;
  return reason.slice(PREFIX.length).trimStart().split(' ')[0] || null;
}

/** The subject a reason of ours names, the word after its label (as sanitize wrote it); null if not ours or none. */
export function reasonSubject(reason: string | null): string | null {
  if (reason === null || !isOurs(reason)) return null;
  return reason.slice(PREFIX.length).trimStart().split(' ')[1] || null;
}
